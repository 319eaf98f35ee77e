# Optional columns: each known one at most once, nothing else; stream ids
# up to 65535; pc and window numbers or empty.
small=transition,linear,physical,size,op
printf '%s,pc,pc\n0,,16,4,r,1,1\n' $small > dup.csv
status memhist import -q --format csv dup.csv a
printf '%s,thread\n0,,16,4,r,1\n' $small > unknown.csv
status memhist import -q --format csv unknown.csv b
printf '%s,stream\n0,,16,4,r,65536\n' $small > big.csv
status memhist import -q --format csv big.csv c
printf '%s,stream\n0,,16,4,r,\n' $small > empty.csv
status memhist import -q --format csv empty.csv d
printf '%s,pc,window\n0,,16,4,r,0xg,\n' $small > badpc.csv
status memhist import -q --format csv badpc.csv e
printf '%s,pc,window\n0,,16,4,r,,-1\n' $small > badwin.csv
status memhist import -q --format csv badwin.csv f
printf '%s,pc\n0,,16,4,r\n' $small > short.csv
status memhist import -q --format csv short.csv g
ls
