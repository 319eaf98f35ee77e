memhist import --format csv in
