memhist inspect --frob s
