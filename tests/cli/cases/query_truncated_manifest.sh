small_store s
head -c 70 s/MANIFEST > m && mv m s/MANIFEST
memhist query s --from 0
