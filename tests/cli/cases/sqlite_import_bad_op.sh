legacy_db b.db "(1,0,NULL,16,4,4),(1,1,NULL,16,4,6)"
memhist import --format sqlite b.db s
