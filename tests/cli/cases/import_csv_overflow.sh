printf 'transition,linear,physical,size,op\n18446744073709551616,1,1,1,r\n' > in.csv
status memhist import --format csv in.csv s
ls
