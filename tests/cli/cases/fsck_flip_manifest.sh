small_store s
flip_byte s/MANIFEST 40
memhist fsck s
