# Resuming with the last id returned gives exactly the continuation.
small_store s
memhist query s --from 0 --op rwx --max 5 --format csv > a
last=$(tail -n 1 a | cut -d, -f1)
while :; do
    memhist query s --after "$last" --op rwx --max 5 --format csv | tail -n +2 > b
    [ -s b ] || break
    cat b >> a
    last=$(tail -n 1 b | cut -d, -f1)
done
cat a
