# Window 4 of data/streams.csv (ids 5-7) as a store of its own: ids from
# 0, streams and metadata kept, window 4 holding everything.
memhist import -q --format csv "$DATA/streams.csv" s
memhist split s --window 4 w
memhist query w --from 0 --all --op rwx --format csv
memhist inspect w --windows | sed -n '/^windows:$/,$p'
memhist inspect w | sed -n '/^streams:/,/^windows:/p'
memhist inspect w | grep '^  import_format'
memhist fsck -q w
