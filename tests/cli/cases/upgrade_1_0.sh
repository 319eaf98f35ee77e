# data/small-v1.store: data/small.csv written by memhist 1.1 (format 1.0).
# It is read as it is, refused for append, and upgraded into a 2.0 store
# that answers every query the same, with its metadata.
cp -r "$DATA/small-v1.store" v1
memhist inspect v1 | grep '^format version' | cut -c1-21
memhist query v1 --from 12 --op rwx --format csv
printf 'transition,linear,physical,size,op\n20,,16,2,w\n' > more.csv
status memhist import -q --append --format csv more.csv v1
memhist upgrade -q v1 v2
memhist inspect v2 | grep '^format version' | cut -c1-21
memhist inspect v2 | grep -E '^  import_(format|source) '
same_answers v1 v2
memhist import -q --append --format csv more.csv v2
memhist query v2 --after 12 --op rwx --format csv
memhist fsck -q v2
cmp -s "$DATA/small-v1.store/seg-0000000000000000.mhs" v1/seg-0000000000000000.mhs && echo source untouched
