small_store s
memhist query s --from 13 --format csv
memhist query s --from 0 --backward --addr 0x5000:0x6000 --format csv
