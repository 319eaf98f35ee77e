memhist import --format sqlite nothere.db s
ls
