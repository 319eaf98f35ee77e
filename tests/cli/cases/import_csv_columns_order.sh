# The optional columns may come in any order; a store with pcs but one
# stream and no window exports only the pc column.
printf 'transition,linear,physical,size,op,pc\n0,,16,4,r,0x10\n1,,32,4,w,\n' > a.csv
memhist import -q --format csv a.csv a
memhist export -q a --format csv -
printf 'transition,linear,physical,size,op,window,stream\n0,,16,4,r,7,3\n1,,32,4,w,,0\n' > b.csv
memhist import -q --format csv b.csv b
memhist query b --from 0 --all --format csv
memhist export -q b --format csv -
