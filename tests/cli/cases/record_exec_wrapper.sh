# A wrapper that execs the real program (as pyenv's python3 shim does):
# valgrind does not follow the exec, so record warns on stderr that what
# runs after the exec is not recorded, still exits 0 and keeps the
# wrapper's accesses. Once with a program that runs long enough to be seen
# (named in the warning), once with one that ends at once.
need valgrind

memhist record --engine valgrind -o s1 -- /bin/sh -c 'exec sleep 2' 2> err1
grep -q "^memhist record: warning: /bin/sh exec'd .*sleep, which runs without valgrind: its accesses are not recorded" err1 && echo "named: warned"
memhist record --engine valgrind -o s2 -- /bin/sh -c 'exec true' 2> err2
grep -q "^memhist record: warning: /bin/sh exec'd .*not recorded" err2 && echo "quick: warned"
memhist fsck -q s1
memhist fsck -q s2
memhist record --engine valgrind -o s3 -- /bin/true 2> err3
grep -c warning err3 || true
