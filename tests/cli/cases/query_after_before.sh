small_store s
memhist query s --after 3 --max 2 --format csv
memhist query s --before 5 --op rwx --max 3 --format csv
memhist query s --after 13 --format csv
memhist query s --before 0 --format csv
