memhist import --format xml in s
