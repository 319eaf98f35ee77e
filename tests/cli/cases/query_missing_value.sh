small_store s
memhist query s --from
