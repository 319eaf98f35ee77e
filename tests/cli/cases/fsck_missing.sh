memhist fsck nowhere
