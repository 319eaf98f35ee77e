small_store s
memhist query s --after 0x10000000000000000
