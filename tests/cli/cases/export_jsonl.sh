small_store s
memhist export -q s --format jsonl - | sed -n '3p;9p;12p'
memhist export -q s --format jsonl - | wc -l
