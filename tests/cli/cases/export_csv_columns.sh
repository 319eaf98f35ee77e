# A store with streams, pcs and windows exports the optional CSV columns
# (decimal), and importing the export gives the same export again.
memhist import -q --format csv "$DATA/streams.csv" s
memhist export -q s --format csv -
memhist export -q s --format csv - | memhist import -q --format csv - t
cmp <(memhist export -q s --format csv -) <(memhist export -q t --format csv -) && echo same
memhist export -q s --format jsonl - | head -n 2
# a store without them keeps the five columns
small_store p
memhist export -q p --format csv - | head -n 1
