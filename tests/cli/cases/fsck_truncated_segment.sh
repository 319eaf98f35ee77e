small_store s
seg=$(segment_of s)
head -c 600 "$seg" > t && mv t "$seg"
memhist fsck s
