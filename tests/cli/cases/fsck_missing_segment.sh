small_store s
rm "$(segment_of s)"
memhist fsck s
