small_store s
echo junk > s/seg-0000000000000001.mhs.tmp
status memhist fsck s
memhist fsck --repair s
ls s
