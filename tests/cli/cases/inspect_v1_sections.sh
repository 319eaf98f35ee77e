# A format 1.0 segment (data/small-v1.store, 926 bytes) reports its fixed
# sections as a directory: data from byte 256 (its 79 compressed bytes),
# then dictionary, slices (1 record of 64 bytes), chunks (3 of 56), blocks
# (1 of 56), tiling the file to its end; one stream, 0, holding everything.
cp -r "$DATA/small-v1.store" v1
memhist inspect v1 --segments | sed -n '/^sections of/,$p'
memhist inspect v1 | sed -n '/^streams:/,/^windows:/p'
stat -c %s v1/seg-0000000000000000.mhs
