PATH=/nonexistent "$MEMHIST" record -o s -- /bin/true
