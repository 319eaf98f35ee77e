# store -> sqlite -> store: identical answers, ids included.
small_store s
memhist export -q s --format sqlite s.db
memhist import -q --format sqlite s.db t
same_answers s t
memhist import -q --format lackey "$DATA/small.lackey" l
memhist export -q l --format sqlite l.db
memhist import -q --format sqlite l.db l2
# the legacy layout has no pc: the rest is the same
cmp <(memhist query l --from 0 --all --op rwx --format csv | cut -d, -f1-7) <(memhist query l2 --from 0 --all --op rwx --format csv | cut -d, -f1-7) && echo same
