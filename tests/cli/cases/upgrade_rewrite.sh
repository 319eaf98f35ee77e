# upgrade --rewrite copies a store already at the current format (2.8),
# which plain upgrade refuses: the copy holds the same accesses, answers
# the same questions (with and without a stream filter) and is clean; the
# summary line says "rewrote".
cp -r "$DATA/../../../format/golden/tiny.store" cur
status memhist upgrade -q cur refused
memhist upgrade --rewrite cur new 2> summary.txt
sed 's/ to .*//' summary.txt
memhist inspect new | grep -E 'format version|^accesses' | sed 's/ (memhist.*//'
same_answers cur new
for s in 0 1; do
  memhist query cur --from 0 --stream $s --all --format csv > a.csv
  memhist query new --from 0 --stream $s --all --format csv > b.csv
  cmp -s a.csv b.csv && echo "stream $s: $(($(wc -l < b.csv) - 1)) accesses, same"
done
memhist fsck -q new && echo clean
ls
