memhist export s --format sqlite -
