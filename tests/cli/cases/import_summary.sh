memhist import --format csv "$DATA/small.csv" s
