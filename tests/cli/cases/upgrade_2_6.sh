# The golden 2.6 store upgraded to the current minor: segment 0, whose rows are of
# streams 0 and 1, gets the stream address postings (section 15, SPEC.md
# 9d.2); segment 1 (stream 0 only) none. The answers are the same, with
# and without a stream filter, and the copy is clean.
cp -r "$DATA/../../../format/golden/v2.6/tiny.store" old
memhist upgrade -q old new
memhist inspect --segments old | grep -c 'stream postings' || true
memhist inspect --segments new | grep -c 'stream postings'
same_answers old new
for s in 0 1; do
  memhist query old --from 0 --stream $s --addr 0x1000:0x1fff --all --format csv > a.csv
  memhist query new --from 0 --stream $s --addr 0x1000:0x1fff --all --format csv > b.csv
  cmp -s a.csv b.csv && echo "stream $s: $(($(wc -l < b.csv) - 1)) accesses, same"
done
memhist fsck -q new && echo clean
