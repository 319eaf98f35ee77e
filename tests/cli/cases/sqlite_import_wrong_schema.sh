sqlexec w.db "create table accesses(chunk_id int8, transition int8, phy_first int8, size int, operation int)"
memhist import --format sqlite w.db s
