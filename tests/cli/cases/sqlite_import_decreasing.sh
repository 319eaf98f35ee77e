legacy_db b.db "(1,5,NULL,16,4,4),(1,6,NULL,16,4,4),(1,4,NULL,16,4,4)"
memhist import --format sqlite b.db s
