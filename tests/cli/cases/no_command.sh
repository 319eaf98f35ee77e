memhist
