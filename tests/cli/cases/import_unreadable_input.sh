# /proc/self/mem opens but every read at offset 0 fails (EIO): the read
# error is reported and no store is left behind.
status memhist import --format lackey /proc/self/mem s
ls
