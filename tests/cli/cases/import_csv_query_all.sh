memhist import --quiet --format csv "$DATA/small.csv" s
memhist query s --from 0 --all --op rwx --format csv
