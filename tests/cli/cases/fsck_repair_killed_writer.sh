# A writer killed with SIGKILL after its second commit: --repair leaves a
# store that verifies and holds every committed access (10), nothing more.
mkfifo in
# the binary itself, not the shell function: $! must be its pid
"$MEMHIST" import --format lackey --commit-every 5 --report-commits in s > out 2> err &
pid=$!
exec 3> in
cat "$DATA/small.lackey" "$DATA/small.lackey" >&3
tries=0
until grep -q '^committed 10$' out; do
    tries=$((tries + 1))
    [ $tries -lt 1200 ] || { echo "importer never committed 10" >&2; kill -9 $pid; exit 1; }
    sleep 0.05
done
kill -9 $pid
wait $pid || true
exec 3>&-
memhist fsck --repair --quiet s > /dev/null
memhist fsck s | sed 's/ bytes checked.*//'
memhist query s --from 0 --all --op rwx --format csv | tail -n +2 | wc -l
