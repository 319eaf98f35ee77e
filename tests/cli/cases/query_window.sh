# data/streams.csv: window 1 = ids 1-3, window 4 = ids 5-7; ids 0, 4, 8
# are in no window.
memhist import -q --format csv "$DATA/streams.csv" s
memhist query s --from 0 --all --op rwx --window 4 --format csv
memhist query s --from 2 --all --op rwx --window 1 --format csv
memhist query s --from 9 --backward --all --op rwx --window 1 --stream 2 --format csv
memhist query s --after 5 --max 1 --op rwx --window 4 --format json
