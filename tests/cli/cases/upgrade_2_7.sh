# The golden 2.7 store upgraded to the current minor (2.8): upgrade writes
# one segment, at MANIFEST position 1, so no span stream address set
# (section 16, SPEC.md 9e.1, only at positions 2, 4, 6, ...). The answers
# are the same, with and without a stream filter, and the copy is clean.
cp -r "$DATA/../../../format/golden/v2.7/tiny.store" old
memhist upgrade -q old new
memhist inspect old | grep 'format version' | sed 's/ (memhist.*//'
memhist inspect new | grep 'format version' | sed 's/ (memhist.*//'
memhist inspect --segments new | grep -c 'span stream address set' || true
same_answers old new
for s in 0 1 2; do
  memhist query old --from 0 --stream $s --addr 0x1000:0x1fff --all --format csv > a.csv
  memhist query new --from 0 --stream $s --addr 0x1000:0x1fff --all --format csv > b.csv
  cmp -s a.csv b.csv && echo "stream $s: $(($(wc -l < b.csv) - 1)) accesses, same"
done
memhist fsck -q new && echo clean
