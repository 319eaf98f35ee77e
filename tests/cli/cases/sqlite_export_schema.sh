# The legacy layout: tables, indexes, operation bits, NULL linear, rowids.
small_store s
memhist export -q s --format sqlite s.db
sqlexec s.db "select type, name from sqlite_master order by type, name"
sqlexec s.db "select rowid, transition, linear, phy_first, size, operation from accesses where rowid in (1, 2, 3, 5, 9)"
sqlexec s.db "select count(*) from accesses; select count(*) from chunks where operation not in (1, 2, 4)"
# every access is inside the address range of its chunk, of its operation,
# and inside the transition range of the chunk's slice (addresses compare
# as unsigned 64-bit numbers stored in signed int8)
ule() { echo "((($1) < 0) = (($2) < 0) and ($1) <= ($2) or (($1) >= 0 and ($2) < 0))"; }
sqlexec s.db "select count(*) from accesses a join chunks c on c.rowid = a.chunk_id
  join slices s on s.rowid = c.slice_id
  where c.operation = a.operation and $(ule c.phy_first a.phy_first) and $(ule a.phy_first c.phy_last)
  and a.transition between s.transition_first and s.transition_last"
