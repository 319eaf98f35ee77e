# A flipped byte in the chunk array (its offset is the u64 at byte 144 of
# the segment header): inspect, query and fsck all refuse it, naming a
# checksum problem.
small_store s
seg=$(segment_of s)
off=$(u64_at "$seg" 144)
flip_byte "$seg" $((off + 3))
status memhist inspect s | tail -n 1
status memhist query s --from 0 | tail -n 1
status memhist fsck s | grep -c '^seg-0000000000000000.mhs:[0-9]*: MH_ECHECKSUM: ' | sed 's/^[1-9][0-9]*$/found/'
