small_store s
echo keep > out.csv
status memhist export s --format csv out.csv
cat out.csv
memhist export -q --force s --format csv out.csv
head -n 1 out.csv
