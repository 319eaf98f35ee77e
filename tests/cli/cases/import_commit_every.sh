# --commit-every commits at exact multiples; a parse error later keeps
# what was committed and reports it.
{ cat "$DATA/small.lackey"; cat "$DATA/small.lackey"; echo ' L zz,4'; } > late.lackey
status memhist import --format lackey --commit-every 5 --report-commits late.lackey s
memhist query s --from 0 --all --op rwx --format csv | tail -n +2 | wc -l
memhist fsck --quiet s
