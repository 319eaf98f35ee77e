memhist import --format csv nothere.csv s
ls
