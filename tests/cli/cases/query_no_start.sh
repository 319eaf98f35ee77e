small_store s
memhist query s --max 3
