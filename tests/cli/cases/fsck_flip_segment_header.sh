small_store s
flip_byte "$(segment_of s)" 40
memhist fsck s
