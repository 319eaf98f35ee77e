memhist import --format csv --exec in s
