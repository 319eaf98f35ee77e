mkdir d
head -c 300 /dev/urandom > d/MANIFEST
memhist query d --from 0
