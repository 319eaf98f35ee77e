legacy_db b.db "(1,'x',NULL,16,4,4)"
memhist import --format sqlite b.db s
