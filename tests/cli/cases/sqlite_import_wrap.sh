legacy_db b.db "(1,0,NULL,-2,4,4)"
memhist import --format sqlite b.db s
