# A write that fails while DST is written (ulimit -f, SIGXFSZ ignored; the
# upgraded segment of data/small-v1.store is 1.4 KiB, the limit 1 KiB):
# upgrade names the file and the OS reason and removes DST (the failure
# path store_copy_finish owns); SRC is untouched.
cp -r "$DATA/small-v1.store" v1
( trap '' XFSZ; ulimit -f 1; memhist upgrade -q v1 v2 ) || echo "[exit $?]"
[ -e v2 ] || echo "no DST left"
cmp -s "$DATA/small-v1.store/seg-0000000000000000.mhs" v1/seg-0000000000000000.mhs && echo source untouched
