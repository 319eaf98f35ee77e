need valgrind
memhist record -o no/such/dir/s -- /bin/true
