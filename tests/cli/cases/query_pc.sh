# pc filter: data/streams.csv has pcs 0x400000..0x400010 and 0x1008, and
# two accesses without a pc (which never match).
memhist import -q --format csv "$DATA/streams.csv" s
memhist query s --from 0 --all --op rwx --pc 0x400000:0x400004 --format csv
memhist query s --from 0 --all --op w --pc 0:0xffffffffffffffff --format csv
memhist query s --from 0 --all --op rwx --pc 0x400005:0x400007 --format csv
memhist query s --from 7 --max 2 --op rx
