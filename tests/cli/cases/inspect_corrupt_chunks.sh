# A flipped byte in the chunk array (section type 4 of the segment's
# directory): inspect, query and fsck all refuse it, naming a
# checksum problem.
small_store s
seg=$(segment_of s)
off=$(section_offset "$seg" 4)
flip_byte "$seg" $((off + 3))
status memhist inspect s | tail -n 1
status memhist query s --from 0 | tail -n 1
status memhist fsck s | grep -c '^seg-0000000000000000.mhs:[0-9]*: MH_ECHECKSUM: ' | sed 's/^[1-9][0-9]*$/found/'
