# data/streams.csv: streams 0 (ids 0, 4, 7), 1 (ids 1, 3, 6), 2 (ids 2, 5, 8).
memhist import -q --format csv "$DATA/streams.csv" s
memhist query s --from 0 --all --op rwx --stream 1 --format csv
memhist query s --from 0 --all --op rwx --stream 0,2 --format csv
memhist query s --from 9 --backward --max 2 --op rwx --stream 2 --format csv
# an id the store does not have matches nothing
memhist query s --from 0 --all --op rwx --stream 7 --format csv
