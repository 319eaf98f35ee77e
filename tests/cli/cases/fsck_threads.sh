# --threads N (1 to 16) and MEMHIST_FSCK_THREADS set how many threads
# check the segments; the lines are the same whatever the count, and a
# count out of range, in the option or the variable, is bad usage (2).
memhist import --quiet --format lackey --commit-every 3 "$DATA/small.lackey" s
flip_byte "$(ls s/seg-*.mhs | sed -n 2p)" 260
for t in 1 2 16; do
    status memhist fsck --quiet --threads "$t" s > "out$t"
done
cmp out1 out2 && cmp out1 out16 && cat out1
MEMHIST_FSCK_THREADS=3 status memhist fsck --quiet s | cmp - out1 && echo same with the variable
MEMHIST_FSCK_THREADS=x status memhist fsck --quiet -j 2 s | cmp - out1 && echo the option wins
status memhist fsck --threads 0 s 2>&1
status memhist fsck -j 17 s 2>&1
status memhist fsck --threads 2x s 2>&1
MEMHIST_FSCK_THREADS=0 status memhist fsck s 2>&1
