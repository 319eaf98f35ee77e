# A flipped byte in the chunk array: inspect names the file, the slice whose
# index checksum fails and the byte of that checksum, as fsck does.
small_store s
seg=$(segment_of s)
off=$(section_offset "$seg" 4)
flip_byte "$seg" $((off + 3))
memhist inspect s --chunks > /dev/null 2> err || echo "[exit $?]"
sed 's/0x[0-9a-f]\{16\}/0xSUM/g; s/byte [0-9]*/byte N/' err
