small_store s
memhist query s --from 8 --backward --addr 0x1000:0x1000 --op w --format csv
echo ---
memhist query s --from 8 --backward --op rwx --max 4 --format csv
