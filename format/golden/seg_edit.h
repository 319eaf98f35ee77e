/*
 * seg_edit.h - take a 2.0 segment (or MANIFEST) apart and put it back
 * together, for gen_golden's variants. A segment is read into its header and
 * its sections (directory order); the dictionary into its tables; blocks into
 * their raw (decompressed) bytes. Editing any of them and calling
 * se_seg_emit lays the sections out again (tiling from byte 256), rewrites
 * every block record's offset/sizes/sum when the blocks were decoded, and
 * recomputes every checksum SPEC.md 2.0 names (index_sum, section sums,
 * dir_sum, header_sum) and, from minor 4, the piece sums of section 12
 * (§9f; from minor 5 covering section 13, the id transitions, whenever the
 * segment has it), so a variant's damage is caught only by the check
 * meant for it. Written from SPEC.md, not from the library: a stranger's
 * writer of the same bytes.
 */
#ifndef SE_SEG_EDIT_H
#define SE_SEG_EDIT_H

#include <stddef.h>
#include <stdint.h>

#define SE_MAX_SECTIONS 16
#define SE_MAX_TABLES 16

typedef struct se_buf {
    unsigned char *p;
    size_t len;
} se_buf;

typedef struct se_section {
    uint32_t type, flags, recsz, count;
    se_buf data;
} se_section;

typedef struct se_table {
    uint32_t type, flags, recsz, count;
    se_buf data;
} se_table;

typedef struct se_dict {
    uint32_t reserved;
    size_t ntables;
    se_table t[SE_MAX_TABLES];
} se_dict;

typedef struct se_seg {
    unsigned char hdr[256];
    uint32_t dir_recsz;          /* what emit writes (48, or more for a newer minor) */
    unsigned char dir_pad;       /* the byte that fills directory bytes past 48 */
    size_t nsect;
    se_section s[SE_MAX_SECTIONS];
    /* set by se_seg_decode_blocks: each block's raw bytes and rows */
    size_t nblocks;
    se_buf *raw;
    uint32_t *rows;
} se_seg;

void se_die(const char *what, const char *detail);
se_buf se_load(const char *dir, const char *name);
void se_save(const char *dir, const char *name, const se_buf *b);

void se_seg_parse(const se_buf *file, se_seg *s);
void se_seg_free(se_seg *s);
se_section *se_seg_find(se_seg *s, uint32_t type);
/* Inserts a section at directory position pos (bytes copied). */
void se_seg_insert(se_seg *s, size_t pos, uint32_t type, uint32_t flags,
                   const void *data, size_t len);
/* Decompresses every block (LZ4) into s->raw; emit then recompresses them
 * and rebuilds the data section and block records. */
void se_seg_decode_blocks(se_seg *s);
/* Lays the segment out again and recomputes every checksum. */
se_buf se_seg_emit(se_seg *s);

void se_dict_parse(const se_buf *section, se_dict *d);
void se_dict_free(se_dict *d);
se_table *se_dict_find(se_dict *d, uint32_t type);
void se_dict_emit(const se_dict *d, se_buf *section);
/* Appends a string to the strings table; returns its index. */
uint32_t se_dict_add_string(se_dict *d, const char *s);
/* Widens every record of a record array to newsz bytes, filling with pad. */
void se_widen(se_buf *data, uint32_t *recsz, uint32_t count, uint32_t newsz,
              unsigned char pad);

/* Buffer helpers */
void se_append(se_buf *b, const void *p, size_t n);
void se_append_varint(se_buf *b, uint64_t v);

/* Rewrites seg's copy of header_sum and file_size in the MANIFEST records,
 * and the MANIFEST checksum (header_size and record_size as the file says). */
void se_manifest_fix(const char *store);

#endif
