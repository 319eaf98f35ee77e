# A bad --streams file is refused before the store is created, naming the
# line; so is a missing one.
printf 'transition,linear,physical,size,op,stream\n0,,0x1000,4,r,1\n' > in.csv
printf 'id,kind\n1,thread\n2,fiber\n' > kind.csv
status memhist import --format csv --streams kind.csv in.csv s
printf 'id,name\n1,a\n1,b\n' > twice.csv
status memhist import --format csv --streams twice.csv in.csv s
printf 'name,kind\nx,thread\n' > noid.csv
status memhist import --format csv --streams noid.csv in.csv s
printf 'id,pid\n1,2,3\n' > fields.csv
status memhist import --format csv --streams fields.csv in.csv s
printf 'id,parent\n1,1\n' > self.csv
status memhist import --format csv --streams self.csv in.csv s
status memhist import --format csv --streams missing.csv in.csv s
test -e s || echo "no store"
