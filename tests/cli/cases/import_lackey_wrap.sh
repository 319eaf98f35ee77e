printf 'I  0400,2\n S fffffffffffffffe,4\n' > w.lackey
memhist import --format lackey w.lackey s
