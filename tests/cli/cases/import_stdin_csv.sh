memhist import --quiet --format csv - s < "$DATA/small.csv"
memhist query s --from 0 --all --op rwx --format csv
