need valgrind
mkdir s
memhist record -o s -- /bin/true
