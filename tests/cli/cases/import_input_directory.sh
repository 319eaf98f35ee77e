mkdir d
memhist import --format lackey d s
