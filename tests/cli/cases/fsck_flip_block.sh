# offset 256 is the first compressed access block
small_store s
flip_byte "$(segment_of s)" 260
memhist fsck s
