# The golden 2.0 store (two streams, pc, three windows, the last one empty)
# upgraded to the current minor keeps its window table, its streams and
# its answers; the copy is clean. (Upgrade dropped windows before 1.3.)
cp -r "$DATA/../../../format/golden/v2.0/tiny.store" old
memhist upgrade -q old new
memhist inspect --windows old | sed -n '/^        window/,$p' > old.windows
memhist inspect --windows new | sed -n '/^        window/,$p' > new.windows
cat new.windows
cmp old.windows new.windows && echo same windows
same_answers old new
memhist query new --from 0 --window 2 --all --op rwx --format csv | cut -d, -f1-2
memhist fsck -q new && echo clean
