printf 'transition,linear,physical,size,op\n5,2,3,4,r\n4,2,3,4,r\n' > in.csv
status memhist import --format csv in.csv s
ls
