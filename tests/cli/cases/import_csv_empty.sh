printf '' > in.csv
status memhist import --format csv in.csv s
ls
