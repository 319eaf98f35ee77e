# A sealed segment the MANIFEST does not list (a crash between writing the
# segment and the new MANIFEST): reported, then adopted by --repair.
small_store s
cp s/MANIFEST old
printf 'transition,linear,physical,size,op\n20,,16,2,w\n' > more.csv
memhist import -q --append --format csv more.csv s
cp old s/MANIFEST
status memhist fsck -q s
memhist fsck --repair s
memhist fsck -q s
memhist query s --after 13 --format csv
