memhist export s out
