# --to-id ID: forward keeps id <= ID, backward id >= ID, with any start; a
# resume chain with the same end stops there too.
small_store s
memhist query s --after 2 --to-id 5 --op rwx --all --format csv
echo ---
memhist query s --before 10 --to-id 7 --op rwx --all --format csv
echo ---
memhist query s --from 8 --to-id 9 --op rwx --all --format csv
echo ---
memhist query s --after 5 --to-id 5 --op rwx --all --format csv
echo ---
memhist query s --from 0 --to-id 6 --op rwx --max 4 --format csv > a
last=$(tail -n 1 a | cut -d, -f1)
while :; do
    memhist query s --after "$last" --to-id 6 --op rwx --max 4 --format csv | tail -n +2 > b
    [ -s b ] || break
    cat b >> a
    last=$(tail -n 1 b | cut -d, -f1)
done
cat a
