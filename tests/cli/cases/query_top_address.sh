small_store s
memhist query s --from 0 --addr 0xffffffffffffffff:0xffffffffffffffff --op rwx --format csv
memhist query s --from 0 --addr 18446744073709551360:18446744073709551360 --op w --format csv
