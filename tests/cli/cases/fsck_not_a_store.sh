# A directory that holds none of a store's files is not a store: fsck says
# so and exits 1, and --repair does not make it one (no MANIFEST or LOCK
# appears). Once empty, once holding other files.
mkdir empty other
echo data > other/notes.txt
mkdir other/sub
for d in empty other; do
    status memhist fsck "$d"
    status memhist fsck --repair "$d"
    echo "$d holds: $(ls -A "$d" | tr '\n' ' ')"
done
