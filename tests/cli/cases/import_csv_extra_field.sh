printf 'transition,linear,physical,size,op\n1,2,3,4,r,9\n' > in.csv
status memhist import --format csv in.csv s
ls
