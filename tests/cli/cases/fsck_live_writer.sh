# fsck while a writer is at work (an import fed through a FIFO the test
# keeps open, so it cannot finish): the segment it is writing is reported
# as the active writer's, not as left by an interrupted writer; the summary
# says busy, exit 1; --repair refuses and changes nothing. Once the writer
# is done, the store is clean.
need python3

mkfifo feed
"$MEMHIST" import -q -f csv feed s &
pid=$!
exec 3> feed
python3 -c '
import sys
sys.stdout.write("transition,linear,physical,size,op\n")
for i in range(200000):
    sys.stdout.write("%d,,%d,8,r\n" % (i, 4096 + i * 8))
' >&3
# the writer builds slices in the background: wait for its temporary file
until ls s 2>/dev/null | grep -q '\.tmp$'; do sleep 0.1; done
status memhist fsck s | sed "s/, [0-9]* bytes checked in [0-9.]* s$//"
status memhist fsck --repair s
ls s | sed 's/[0-9a-f]\{16\}/N/'
exec 3>&-
wait "$pid"
memhist fsck s | sed "s/, [0-9]* bytes checked in [0-9.]* s$//"
