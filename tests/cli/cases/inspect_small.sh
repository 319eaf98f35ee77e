small_store s
memhist inspect s | grep -E '^(store|accesses|transitions|segments):|^  import_format'
