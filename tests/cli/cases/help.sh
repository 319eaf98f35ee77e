memhist --help
memhist query --help
memhist import -h
