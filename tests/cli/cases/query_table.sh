small_store s
memhist query s --from 9 --max 3
