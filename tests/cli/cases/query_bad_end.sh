small_store s
memhist query s --from 0 --to-id 0x1ffffffffffffffff
