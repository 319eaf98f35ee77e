# line 6 is not a lackey record: the error names it, and the store that
# import created (nothing committed) is removed.
sed '6s/.*/ Q 1234,4/' "$DATA/small.lackey" > bad.lackey
status memhist import --format lackey bad.lackey s
ls
