# Window ids must increase: window 1 cannot come back after window 2. The
# error names the line; nothing was committed, so no store is left.
printf 'transition,linear,physical,size,op,window\n0,,16,4,r,1\n1,,16,4,r,2\n2,,16,4,r,1\n' > w.csv
status memhist import --format csv w.csv s
ls
