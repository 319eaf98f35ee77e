small_store s
memhist export -q s --format sqlite s.db
head -c 5000 s.db > t.db
memhist import --format sqlite t.db t
