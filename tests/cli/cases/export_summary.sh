small_store s
memhist export s --format jsonl out.jsonl
