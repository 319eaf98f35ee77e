# Appending continues the store's window ids: a smaller one is refused
# (the writer's MH_EORDER), naming the line; the store keeps what it had.
memhist import -q --format csv "$DATA/streams.csv" s
printf 'transition,linear,physical,size,op,window\n9,,16,4,r,3\n' > more.csv
status memhist import -q --append --format csv more.csv s
printf 'transition,linear,physical,size,op,window\n9,,16,4,r,5\n' > ok.csv
memhist import -q --append --format csv ok.csv s
memhist inspect s --windows | sed -n '/^windows:$/,$p'
