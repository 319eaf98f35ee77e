memhist record -o s
