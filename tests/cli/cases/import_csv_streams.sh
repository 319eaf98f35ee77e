# --streams FILE names and kinds the streams of a CSV import (declared
# before any access; a stream it does not list is declared kind other, as
# without it); a name that is not UTF-8 is stored with U+FFFD. With
# --append a listed stream takes the new description (the newest wins).
printf 'id,kind,name,pid,tid,cpu,parent\n0,process,main,4242,,,\n1,thread,worker \377,4242,4243,0x3,0\n\n2,cpu,,,,1,\n' > streams.csv
printf 'transition,linear,physical,size,op,stream\n0,,0x1000,4,r,0\n1,,0x2000,4,w,1\n2,,0x3000,4,r,5\n' > in.csv
memhist import --format csv --quiet --streams streams.csv in.csv s
memhist inspect s | sed -n '/^streams:/,/^windows:/p'
memhist inspect --json s > out.json
if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import json
d = json.load(open("out.json", encoding="utf-8"))
for s in d["streams"]:
    print(s["id"], s["kind"], s["name"], s["pid"], s["tid"], s["cpu"], s["parent"], s["accesses"])'
else
    printf '0 process main 4242 None None None 1\n1 thread worker \357\277\275 4242 4243 3 0 1\n2 cpu None None None 1 None 0\n5 other None None None None None 1\n'
fi
# columns in another order, a subset: stream 5 named on append
printf 'name,id\nlate,5\n' > more.csv
printf 'transition,linear,physical,size,op,stream\n3,,0x4000,4,w,5\n' > in2.csv
memhist import --format csv --quiet --append --streams more.csv in2.csv s
memhist inspect s | grep -E '^ +5 '
