small_store s
memhist query s --from 12x
