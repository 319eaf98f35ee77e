# --until T: forward keeps transition <= T, backward transition >= T; an end
# equal to the start keeps that transition, one before it gives no access.
small_store s
memhist query s --from 2 --until 5 --op rwx --all --format csv
echo ---
memhist query s --from 10 --backward --until 8 --op rwx --all --format csv
echo ---
memhist query s --from 5 --until 5 --op rwx --all --format csv
echo ---
memhist query s --from 5 --until 4 --op rwx --all --format csv
echo ---
memhist query s --from 5 --backward --until 6 --op rwx --all --format csv
