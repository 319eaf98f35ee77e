small_store s
echo keep > s.db
memhist export s --format sqlite s.db
