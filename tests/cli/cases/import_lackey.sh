memhist import --quiet --format lackey "$DATA/small.lackey" s
memhist query s --from 0 --all --op rwx --format csv
