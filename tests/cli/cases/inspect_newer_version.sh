small_store s
poke_byte s/MANIFEST 8 9
memhist inspect s
