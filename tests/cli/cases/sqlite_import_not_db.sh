head -c 5000 /dev/urandom > g.db
status memhist import --format sqlite g.db s
ls
