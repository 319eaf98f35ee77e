need valgrind
memhist record -q -- /bin/true
ls -d memhist-true-*.store
memhist query memhist-true-*.store --from 0 --max 1 --format csv | wc -l
