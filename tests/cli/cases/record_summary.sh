need valgrind
memhist record -o s -- /bin/true
