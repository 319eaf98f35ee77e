MEMHIST_VALGRIND=/nonexistent/valgrind memhist record -o s -- /bin/true
