# A store written by a future major version (byte 8 of MANIFEST is the
# major version, little-endian u16): refused with a version error.
small_store s
poke_byte s/MANIFEST 8 3
memhist query s --from 0
