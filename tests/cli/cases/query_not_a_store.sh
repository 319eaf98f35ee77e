mkdir d
memhist query d --from 0
