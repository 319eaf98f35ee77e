# The open reads the MANIFEST only: the damaged segment fails the query that reaches it.
small_store s
seg=$(segment_of s)
rm "$seg"
mkdir "$seg"
memhist query s --from 0
