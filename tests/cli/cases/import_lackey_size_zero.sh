printf 'I  0400,2\n L 1000,0\n' > z.lackey
memhist import --format lackey z.lackey s
