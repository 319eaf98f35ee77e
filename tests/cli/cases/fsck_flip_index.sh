# a byte of the block records (section type 5 of the segment's directory)
small_store s
seg=$(segment_of s)
flip_byte "$seg" $(( $(section_offset "$seg" 5) + 10 ))
memhist fsck s
