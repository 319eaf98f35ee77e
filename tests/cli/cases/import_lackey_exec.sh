memhist import --quiet --exec --format lackey "$DATA/small.lackey" s
memhist query s --from 0 --op x --all --format csv
memhist query s --from 0 --op rwx --all --format csv | wc -l
