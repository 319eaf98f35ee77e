printf 'transition,linear,physical,size,op\n1,2,3,4294967296,r\n' > in.csv
status memhist import --format csv in.csv s
ls
