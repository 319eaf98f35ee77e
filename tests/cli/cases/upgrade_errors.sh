# upgrade refuses a 2.8 store, an existing DST and a missing SRC (exit 1),
# and wrong operands (exit 2); nothing is created.
small_store s
status memhist upgrade s t
cp -r "$DATA/small-v1.store" v1
mkdir taken
status memhist upgrade v1 taken
status memhist upgrade missing t
status memhist upgrade v1
ls
