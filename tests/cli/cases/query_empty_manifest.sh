small_store s
: > s/MANIFEST
memhist query s --from 0
