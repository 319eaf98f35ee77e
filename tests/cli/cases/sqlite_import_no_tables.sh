sqlexec e.db "create table other(x int)"
memhist import --format sqlite e.db s
