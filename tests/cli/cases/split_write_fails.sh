# The file size limit (ulimit -f, SIGXFSZ ignored) makes the new store's
# segment write fail: split names the file and the OS reason, and removes
# OUT (the failure path store_copy_finish owns); STORE is untouched.
awk 'BEGIN { print "transition,linear,physical,size,op,window"; srand(5);
             for (i = 0; i < 20000; i++)
                 printf "%d,,%d,8,%s,1\n", i, int(rand() * 2^40), (i % 2 ? "r" : "w") }' > big.csv
memhist import -q --format csv big.csv s
( trap '' XFSZ; ulimit -f 4; memhist split -q s --window 1 out ) || echo "[exit $?]"
[ -e out ] || echo "no OUT left"
memhist fsck -q s && echo source clean
