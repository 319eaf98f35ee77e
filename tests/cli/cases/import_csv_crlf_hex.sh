printf 'transition,linear,physical,size,op\r\n0X10,0XFF,0xAbC,0x10,w\r\n17,,4096,1,x\r\n' > in.csv
memhist import -q --format csv in.csv s
memhist query s --from 0 --op rwx --format csv
