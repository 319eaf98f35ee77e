# A flipped byte inside the first access block (data starts at byte 256):
# the query names the file, slice, block and byte as fsck does, in the same
# words, and gives the stored and computed checksums.
small_store s
flip_byte "$(segment_of s)" 260
status memhist query s --from 0 --format csv 2> err
sed 's/0x[0-9a-f]\{16\}/0xSUM/g' err
# fsck also reports the data section's own checksum: its block line is
# the one to compare
memhist fsck s | grep 'block checksum' | sed 's/0x[0-9a-f]\{16\}/0xSUM/g'
# the same place and words on both sides
q=$(sed 's/^memhist query: error: //' err)
f=$(memhist fsck s | grep 'block checksum' | sed 's/^\([^:]*\):[0-9]*: MH_ECHECKSUM: /\1: /')
[ "$q" = "$f" ] && echo same
