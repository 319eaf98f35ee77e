small_store s
memhist import --format csv "$DATA/small.csv" s
