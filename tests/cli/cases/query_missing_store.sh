memhist query nowhere --from 0
