# The README's first command, tools/scripts/demo.sh, run on the memhist
# under test (MEMHIST_DEMO_CLI: nothing installed or built): it records its
# victim with the default engine and every question it asks is answered.
# It once stopped with exit 2 at its first query: with streams, `inspect
# --json` has a "transition_last" per stream too, and both numbers went
# to --from.
need cc
MEMHIST_DEMO_CLI=$MEMHIST MEMHIST_DEMO_DIR=$PWD/demo \
    bash "$DATA/../../../tools/scripts/demo.sh" > out.txt
grep -c '^== ' out.txt
buf=$(cat demo/addr.txt)
b40=$(printf '0x%016x' $((buf + 40)))
# the program's buf[40] = 0xAB: one byte written at buf + 40
sed -n '/^== the last write to byte 40/,/^$/p' out.txt |
    awk -v a="$b40" '$4 == a && $5 == 1 && $6 == "w" { n++ } END { print n + 0, "row: buf[40] = 0xAB" }'
# 3 rounds of 64 one-byte writes and buf[40] (free() may add its own)
awk -F, 'NR > 1 && $6 == "w" { n++ } END { print (n >= 193 ? "193 writes or more" : n " writes") }' demo/writes.csv
memhist query demo/demo.store --from 0 --addr "$b40:$b40" --op w --all --format csv | tail -n +2 | wc -l
tail -n 1 out.txt | grep -o 'clean: 0 problems'
