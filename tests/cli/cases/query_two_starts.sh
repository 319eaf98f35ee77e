small_store s
memhist query s --from 1 --after 2
