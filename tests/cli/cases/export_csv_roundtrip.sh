small_store s
memhist export -q s --format csv - | memhist import -q --format csv - t
same_answers s t
