small_store s
seg=$(segment_of s)
rm "$seg"
mkdir "$seg"
memhist query s --from 0
