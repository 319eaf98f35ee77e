small_store s
memhist query s --from 5 --addr 0x1000:0x1003 --format csv
