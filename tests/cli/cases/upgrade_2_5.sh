# The golden 2.5 store upgraded to the current minor: segment 0, whose slice of two
# 4 GiB accesses had no address postings in 2.5, gets them as a section 14
# (its two accesses as wide ranges, SPEC.md 9d.1); the answers are the
# same, a point query inside the read of 4 GiB finds it, the copy is clean.
cp -r "$DATA/../../../format/golden/v2.5/tiny.store" old
memhist upgrade -q old new
memhist inspect --segments old | grep -c 'wide address postings' || true
memhist inspect --segments new | grep -c 'wide address postings'
same_answers old new
memhist query new --from 0 --addr 0x10:0x17 --op r --format csv | cut -d, -f1-2,5
memhist fsck -q new && echo clean
