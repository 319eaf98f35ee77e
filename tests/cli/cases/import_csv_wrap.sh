printf 'transition,linear,physical,size,op\n1,2,0xfffffffffffffff0,17,r\n' > in.csv
status memhist import --format csv in.csv s
ls
