need valgrind
memhist record -o s -- ./no-such-program
