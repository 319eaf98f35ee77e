# A second writer on a store is refused while the first one runs.
mkfifo in
"$MEMHIST" import --format csv --commit-every 1 --report-commits in s > out 2> err &
pid=$!
exec 3> in
printf 'transition,linear,physical,size,op\n1,,16,4,r\n2,,32,4,w\n' >&3
tries=0
until grep -q '^committed 1$' out; do
    tries=$((tries + 1))
    [ $tries -lt 1200 ] || { echo "importer never committed" >&2; kill $pid; exit 1; }
    sleep 0.05
done
status memhist import --append --format csv "$DATA/small.csv" s
exec 3>&-
wait $pid
cat out
memhist query s --from 0 --op rwx --format csv
