memhist query --from 0
