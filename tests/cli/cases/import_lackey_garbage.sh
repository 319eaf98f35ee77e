head -c 4096 /dev/urandom | tr -d '\n=' > g.lackey
memhist import --format lackey g.lackey s
