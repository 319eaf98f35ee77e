# A database written by the legacy tools: int8 values, operation bits.
legacy_db old.db "(1,3,NULL,16,4,4),(1,3,100,16,4,2),(2,7,200,-1,1,1),(3,9,300,4096,8,4)"
memhist import -q --format sqlite old.db s
memhist query s --from 0 --all --op rwx --format csv
