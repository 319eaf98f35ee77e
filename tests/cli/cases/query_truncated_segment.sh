# The open reads the MANIFEST only: the damaged segment fails the query that reaches it.
small_store s
seg=$(segment_of s)
head -c 200 "$seg" > t && mv t "$seg"
memhist query s --from 0
