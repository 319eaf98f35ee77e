small_store s
memhist fsck s
memhist fsck --quiet s
