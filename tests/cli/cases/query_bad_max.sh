small_store s
memhist query s --from 0 --max ten
