small_store s
memhist query s --after 2 --backward
