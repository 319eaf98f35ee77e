# A MANIFEST that cannot be read (a directory in its place: unreadable even
# for root, unlike chmod 000).
small_store s
rm s/MANIFEST
mkdir s/MANIFEST
status memhist query s --from 0
status memhist inspect s
# fsck either reports the MANIFEST as a problem or cannot check at all
status memhist fsck s | tail -n 1
