printf 'transition,physical,size,op\n1,2,3,r\n' > in.csv
status memhist import --format csv in.csv s
ls
