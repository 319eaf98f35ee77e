cat "$DATA/small.lackey" | memhist import --quiet --format lackey - s
memhist query s --from 0 --all --op rwx --format csv
