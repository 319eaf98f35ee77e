MEMHIST_VALGRIND=/nonexistent/valgrind memhist record --engine valgrind -o s -- /bin/true
