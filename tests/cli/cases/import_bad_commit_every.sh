memhist import --format csv --commit-every 0 in s
