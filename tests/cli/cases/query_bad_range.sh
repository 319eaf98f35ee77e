small_store s
memhist query s --from 0 --addr 0x2000:0x1000
