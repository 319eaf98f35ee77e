memhist export s --format xml out
