# the last 200 bytes of the segment hold the index arrays
small_store s
seg=$(segment_of s)
flip_byte "$seg" $(( $(stat -c %s "$seg") - 100 ))
memhist fsck s
