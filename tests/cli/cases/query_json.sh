small_store s
memhist query s --from 9 --op r --format json
memhist query s --from 13 --format json
