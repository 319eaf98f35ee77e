# A store with no access at all (an import of a header-only csv).
printf 'transition,linear,physical,size,op\n' > e.csv
memhist import -q --format csv e.csv s
memhist inspect s | grep -E '^(accesses|transitions):'
memhist query s --from 0 --format csv
memhist fsck -q s
