small_store s
memhist export -q s --format csv out.csv
cat out.csv
