small_store s
printf 'transition,linear,physical,size,op\n12,,0x10,2,w\n20,,0x20,2,r\n' > more.csv
memhist import --quiet --append --format csv more.csv s
memhist query s --after 12 --op rwx --format csv
