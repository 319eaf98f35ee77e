small_store s
memhist export s --format csv no/such/dir/out.csv
