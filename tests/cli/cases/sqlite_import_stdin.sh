memhist import --format sqlite - s
