# The open reads the MANIFEST only: the damaged segment fails the query that reaches it.
# The segment header's major version (offset 8) bumped: the version check
# comes before the header checksum, so the error names the version.
small_store s
poke_byte "$(segment_of s)" 8 7
memhist query s --from 0
