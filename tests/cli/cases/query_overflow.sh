small_store s
memhist query s --from 18446744073709551616
