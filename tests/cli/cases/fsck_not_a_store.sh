mkdir d
memhist fsck d
