memhist fsck
