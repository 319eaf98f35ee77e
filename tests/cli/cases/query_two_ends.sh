small_store s
memhist query s --from 0 --until 5 --to-id 3
