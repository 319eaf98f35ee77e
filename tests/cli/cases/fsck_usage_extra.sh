memhist fsck a b
