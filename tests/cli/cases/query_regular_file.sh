echo hello > f
memhist query f --from 0
