small_store s
status memhist query s --from 0 --stream 1,1
status memhist query s --from 0 --stream 65536
status memhist query s --from 0 --stream 1,,2
status memhist query s --from 0 --stream ''
status memhist query s --from 0 --stream -1
status memhist query s --from 0 --pc 9:8
status memhist query s --from 0 --pc 9
status memhist query s --from 0 --window x
