small_store s
memhist query s --from 0 --op x --format csv
memhist query s --from 0 --op wx --max 3 --format csv
