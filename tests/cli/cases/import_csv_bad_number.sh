printf 'transition,linear,physical,size,op\n1,2,3,4,r\n2,0x1g,3,4,w\n' > in.csv
status memhist import --format csv in.csv s
ls
