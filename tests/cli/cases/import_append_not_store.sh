mkdir d
echo hi > d/notes.txt
memhist import --append --format csv "$DATA/small.csv" d
