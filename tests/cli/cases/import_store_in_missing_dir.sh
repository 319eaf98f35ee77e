memhist import --format csv "$DATA/small.csv" no/such/dir/s
