# A file cut in the middle of its last line: that line is parsed as it is.
head -c 130 "$DATA/small.lackey" > t.lackey
tail -n 1 t.lackey
echo
memhist import --format lackey t.lackey s
