# split: a window the store lacks, an existing OUT (exit 1, nothing
# created or touched); no --window or a bad one (exit 2).
memhist import -q --format csv "$DATA/streams.csv" s
status memhist split s --window 2 out
mkdir taken
status memhist split s --window 4 taken
status memhist split s out
status memhist split s --window 0x out
status memhist split s --window 4
ls
ls taken | wc -l
