memhist export nowhere --format csv out.csv
ls
