# The file size limit (ulimit -f, SIGXFSZ ignored) makes the segment's
# write fail: import names the file and the OS reason, and leaves no store.
awk 'BEGIN { print "transition,linear,physical,size,op"; srand(3);
             for (i = 0; i < 20000; i++)
                 printf "%d,,%d,8,%s\n", i, int(rand() * 2^40), (i % 2 ? "r" : "w") }' > big.csv
( trap '' XFSZ; ulimit -f 4; memhist import --quiet --format csv big.csv s ) || echo "[exit $?]"
[ -e s ] || echo "no store left"
