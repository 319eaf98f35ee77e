memhist import -q --format csv "$DATA/streams.csv" s
memhist query s --from 0 --window 2
