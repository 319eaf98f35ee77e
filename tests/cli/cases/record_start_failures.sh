# When the engine cannot start the program, record exits 1 with the
# engine's own error line and leaves no store, not even an empty directory:
# a bad option in VALGRIND_OPTS, valgrind missing, the program missing,
# with -o and with the default store name.
need valgrind qemu-x86_64

VALGRIND_OPTS=--bogus status memhist record --engine valgrind -o s -- /bin/true 2> err
grep -q "^memhist record: error: valgrind ended (exit status 1) before starting /bin/true: valgrind: Unknown option: --bogus$" err && echo "bogus: engine's line"
[ -e s ] && echo "bogus: store left" || echo "bogus: no store"

VALGRIND_OPTS=--bogus status memhist record --engine valgrind -- /bin/true 2> err
ls | grep -c store || true

MEMHIST_VALGRIND=/nonexistent status memhist record --engine valgrind -o s -- /bin/true 2> err
cat err
[ -e s ] && echo "no valgrind: store left" || echo "no valgrind: no store"

status memhist record --engine valgrind -o s -- ./no-such-program 2> err
cat err
[ -e s ] && echo "no program: store left" || echo "no program: no store"

# the qemu engine: emulator or plugin missing, the program missing
MEMHIST_QEMU=/nonexistent status memhist record --engine qemu -o s -- /bin/true 2> err
cat err
[ -e s ] && echo "no qemu: store left" || echo "no qemu: no store"
MEMHIST_QEMU_PLUGIN=/nonexistent/plugin.so status memhist record --engine qemu -o s -- /bin/true 2> err
cat err
[ -e s ] && echo "no plugin: store left" || echo "no plugin: no store"
status memhist record --engine qemu -o s -- ./no-such-program 2> err
cat err
[ -e s ] && echo "qemu, no program: store left" || echo "qemu, no program: no store"
