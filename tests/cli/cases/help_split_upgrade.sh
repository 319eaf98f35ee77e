memhist split --help | head -n 1
memhist upgrade --help | head -n 1
memhist help split | grep -c -- '--window K'
memhist --help | grep -E '^  memhist (split|upgrade) '
memhist query --help | grep -E -- '^ +(-[a-z], )?--(stream|pc|window) '
memhist inspect --help | grep -E -- '--windows '
