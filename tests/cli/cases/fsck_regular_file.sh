echo hi > f
memhist fsck f
