small_store s
memhist inspect --dict --segments --slices --chunks s > out
for section in 'format version:' 'bytes on disk:' 'bytes per access:' 'compression:' \
               'metadata:' 'distributions:' '  accesses/chunk' '  chunk width' '  slice span' \
               'dictionary:' '  columns' '  operations:' 'segments:' 'slices:' 'chunks:'; do
    grep -q "^$section" out || echo "missing: $section"
done
grep -c '^    [0-2]  [rwx]  ' out
# Every access is in exactly one chunk: the chunk listing adds up to 14.
awk '/^chunks:$/ {on = 1; next} on && $1 ~ /^[0-9]+$/ {n += $NF} END {print n}' out
