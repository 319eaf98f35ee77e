# A real trace (many slices and chunks): store -> sqlite -> store and
# store -> csv -> store give the same answers (the legacy SQLite schema has
# no pc column: its round trip is compared without it; CSV keeps it), and
# every exported access points at a chunk of its own operation.
need valgrind
memhist record -q --exec -o s -- /bin/true
memhist export -q s --format sqlite s.db
memhist import -q --format sqlite s.db t
memhist export -q s --format csv - | memhist import -q --format csv - c
for q in "--from 0 --all --op rwx" "--from 50000 --backward --max 3000 --op w" \
         "--after 1000 --max 5000 --op rx --addr 0x4000000:0x4ffffff" \
         "--from 0 --all --op r --addr 0x1ffe000000:0x1fffffffff"; do
    memhist query s $q --format csv > a
    memhist query t $q --format csv > b
    memhist query c $q --format csv > d
    cut -d, -f1-7 a > a7
    cut -d, -f1-7 b > b7
    cmp -s a7 b7 && cmp -s a d && echo "same $(wc -l < a | tr -d ' ')" || echo "differ: $q"
done | sed 's/same [0-9]*/same/'
sqlexec s.db "select count(*) from accesses a join chunks c on c.rowid = a.chunk_id where c.operation <> a.operation"
memhist fsck -q t
