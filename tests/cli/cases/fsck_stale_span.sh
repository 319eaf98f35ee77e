# A lost MANIFEST rebuilt by --repair while two empty segments (seq 2 and
# 4) were lost too: every later position moves back, so the span address
# sets written after them name other segments than their new positions
# cover. They are stale: --repair and fsck report them as notes, not
# problems (exit 0, clean), and every access is still answered.
"$MKEMPTIES" s 14 2 4 9
rm s/MANIFEST s/seg-0000000000000002.mhs s/seg-0000000000000004.mhs
memhist fsck --repair s | grep -v '^repair: adopted' | sed 's/at byte [0-9]*/at byte N/'
memhist fsck s | sed 's/at byte [0-9]*/at byte N/'
memhist query s --from 0 --all --op rwx --format csv | tail -n +2 | wc -l
memhist query s --from 0 --addr 0x500000:0x500007 --op rw --max 3 --format csv
