memhist import in s
