/*
 * idmap_test.c - the id map (src/idmap_build.c, src/idmap_read.c, SPEC.md
 * "Id map") against the truth read from the blocks: stores written by the
 * writer (u8 labels, u16 labels from slices of thousands of chunks, slices
 * of one and several groups, a discard in the middle of a segment), every
 * group's labels decoded by mh_idmap_labels and compared with the chunk of
 * each row found by decoding every block; the option off writes no section;
 * a group whose bytes are damaged (checksums fixed) fails with MH_ECORRUPT,
 * a damaged section without the sums fixed with MH_ECHECKSUM; fsck agrees.
 */
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "testutil.h"

static const mh_seg *seg_of(const mh_reader *r, size_t i) {
    const mh_seg *s = NULL;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_reader_seg(r, i, &s, &d));
    return s;
}

/* Accesses with `spread` distinct far-apart regions: few chunks (u8 labels)
 * or, with chunk_min_accesses 1 and a large spread, thousands (u16). */
static void gen_trace(tu_rng *rng, mh_access *all, size_t n, uint64_t spread) {
    for (size_t i = 0; i < n; i++) {
        mh_access *x = &all[i];
        memset(x, 0, sizeof *x);
        x->id = i;
        x->transition = i / 2;
        x->physical = 0x100000u + (tu_below(rng, spread) << 12) + tu_below(rng, 64);
        x->size = 1u << tu_below(rng, 4);
        x->op = (uint8_t)(tu_below(rng, 3) == 0 ? MH_OP_WRITE : MH_OP_READ);
        if (tu_below(rng, 40) == 0)
            x->op = MH_OP_EXEC;
    }
}

static void write_store(const char *dir, const mh_access *all, size_t n,
                        uint32_t slice, uint32_t chunk_min, uint32_t id_map,
                        uint64_t discard_at) {
    mh_writer_options o;
    mh_writer_options_init(&o);
    CHECK(o.id_map == 1); /* the default */
    o.slice_accesses = slice;
    o.block_accesses = 128;
    o.chunk_min_accesses = chunk_min;
    o.commit_accesses = 60000;
    o.id_map = id_map;
    mh_writer *w;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, &o, &w));
    size_t i = 0;
    if (discard_at) {
        /* appended up to discard_at + 20000 (a slice past discard_at built
         * into the segment), then cut back to discard_at's transition: the
         * segment's id map loses the cut slices' groups */
        size_t upto = discard_at + 20000 < n ? discard_at + 20000 : n;
        CHECK_OK(mh_writer_append_batch(w, all, upto, NULL));
        CHECK_OK(mh_writer_discard_from(w, all[discard_at].transition));
        i = discard_at;
        while (i > 0 && all[i - 1].transition == all[discard_at].transition)
            i--;
    }
    for (; i < n; i += 997)
        CHECK_OK(mh_writer_append_batch(w, all + i, n - i < 997 ? n - i : 997, NULL));
    CHECK_OK(mh_writer_close(w));
}

/* The chunk (relative) of every id offset of slice s, from its blocks. */
static void truth(const mh_seg *seg, uint32_t s, uint32_t *chunk_of) {
    mh_slice sl;
    mh_seg_slice(seg, s, &sl);
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_seg_slice_check(seg, s, &sl, &d));
    for (uint32_t x = 0; x < sl.count; x++)
        chunk_of[x] = UINT32_MAX;
    mh_rows rows = {0};
    CHECK_OK(mh_rows_reserve(&rows, seg->rows_per_block));
    uint8_t *scratch = malloc(mh_block_raw_bound(seg->rows_per_block));
    CHECK(scratch);
    uint32_t c = 0;
    mh_chunk ck;
    CHECK_OK(mh_seg_chunk(seg, &sl, sl.chunk_first, &ck, &d));
    for (uint32_t b = 0; b < sl.block_count; b++) {
        CHECK_OK(mh_seg_decode_block(seg, &sl, b, scratch, &rows, &d));
        for (uint32_t k = 0; k < rows.n; k++) {
            uint32_t row = b * seg->rows_per_block + k;
            while (row >= ck.row_first + ck.row_count) {
                c++;
                CHECK(c < sl.chunk_count);
                CHECK_OK(mh_seg_chunk(seg, &sl, sl.chunk_first + c, &ck, &d));
            }
            CHECK(rows.id_off[k] < sl.count);
            CHECK(chunk_of[rows.id_off[k]] == UINT32_MAX);
            chunk_of[rows.id_off[k]] = c;
        }
    }
    for (uint32_t x = 0; x < sl.count; x++)
        CHECK(chunk_of[x] != UINT32_MAX);
    free(scratch);
    mh_rows_free(&rows);
}

/* Every label of every slice of the store against the truth; returns the
 * widest label width met (from the chunk counts). */
static unsigned check_labels(const char *dir, size_t *groups_out) {
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    uint32_t *labels = malloc(MH_IDMAP_GROUP_MAX * sizeof *labels);
    CHECK(labels);
    unsigned widest = 0;
    size_t groups = 0;
    tu_rng rng = {5};
    for (size_t i = 0; i < r->nsegs; i++) {
        const mh_seg *seg = seg_of(r, i);
        CHECK(seg->major == 2 && seg->minor == MHF_VERSION_MINOR);
        CHECK(mh_idmap_present(seg));
        mh_segment_info si = {.struct_size = sizeof si};
        CHECK_OK(mh_reader_segment_info(r, i, &si));
        const mh_section *sec;
        CHECK_OK(mh_seg_section(seg, MHF_SECT_IDMAP, &sec));
        CHECK(si.idmap_bytes == sec->size && si.idmap_bytes > MHF_IDMAP_HEADER_SIZE);
        for (uint32_t s = 0; s < seg->nslices; s++) {
            mh_slice sl;
            mh_seg_slice(seg, s, &sl);
            uint32_t *t = malloc((size_t)sl.count * sizeof *t);
            CHECK(t);
            truth(seg, s, t);
            unsigned w = sl.chunk_count <= 256 ? 1 : sl.chunk_count <= 65536 ? 2 : 4;
            if (w > widest)
                widest = w;
            for (uint32_t x0 = 0; x0 < sl.count; x0 += MH_IDMAP_GROUP_IDS) {
                /* any id offset of the group finds it */
                uint32_t span = sl.count - x0 < MH_IDMAP_GROUP_IDS ? sl.count - x0
                                                                   : MH_IDMAP_GROUP_IDS;
                uint32_t x = x0 + (uint32_t)tu_below(&rng, span);
                uint32_t first = 7, n = 7;
                mh_diag d = {0, 0, ""};
                CHECK_OK(mh_idmap_labels(seg, s, x, labels, &first, &n, &d));
                CHECKF(first == x0 && n == span, "slice %u x %u: first %u n %u",
                       s, x, first, n);
                for (uint32_t k = 0; k < n; k++)
                    CHECKF(labels[k] == t[x0 + k], "slice %u id offset %u: label %u, "
                           "chunk %u", s, x0 + k, labels[k], t[x0 + k]);
                groups++;
            }
            free(t);
        }
    }
    free(labels);
    mh_reader_close(r);
    *groups_out = groups;
    return widest;
}


/* Segment 0's id map bytes edited, its checksums fixed when `fix`. */
static void damage(const char *dir, int fix, void (*edit)(uint8_t *p, uint64_t size)) {
    mh_manifest m;
    mh_diag d = {0, 0, ""};
    CHECK_OK(mh_manifest_load(dir, &m, &d));
    char name[MHF_SEGMENT_NAME_LEN + 1], path[600];
    mh_segment_name(name, m.recs[0].seq);
    tu_join(path, sizeof path, dir, name);
    size_t len;
    uint8_t *b = tu_read_file(path, &len);
    CHECK(b);
    uint64_t off, size;
    uint32_t cnt;
    CHECK(mhf_seg_find(b, len, MHF_SECT_IDMAP, &off, &size, &cnt));
    edit(b + off, size);
    if (fix) {
        uint32_t ndir = mhf_load_u32(b + MHF2_SEG_DIR_COUNT);
        uint64_t doff = mhf_load_u64(b + MHF2_SEG_DIR_OFF);
        for (uint32_t i = 0; i < ndir; i++) {
            uint8_t *e = b + doff + (size_t)i * MHF2_DIR_SIZE;
            if (mhf_load_u32(e + MHF2_DIR_TYPE) == MHF_SECT_IDMAP)
                mhf_store_u64(e + MHF2_DIR_SUM, mh_hash(b + off, size));
        }
        mhf_store_u64(b + MHF2_SEG_DIR_SUM, mh_hash(b + doff, (size_t)ndir * MHF2_DIR_SIZE));
        uint64_t hsum = mh_hash(b, MHF_SEG_HEADER_SUM);
        mhf_store_u64(b + MHF_SEG_HEADER_SUM, hsum);
        m.recs[0].header_sum = hsum;
        CHECK_OK(mh_manifest_store(dir, &m, &d));
    }
    tu_write_file(path, b, len);
    free(b);
    mh_manifest_free(&m);
}

/* The first group's first label becomes 255 (u8 labels): not a chunk of a
 * slice of fewer chunks. Recompressed so the LZ4 block stays valid. */
static void bad_label(uint8_t *p, uint64_t size) {
    (void)size;
    uint32_t ng = mhf_load_u32(p + MHF_IDMAP_GROUP_COUNT);
    uint8_t *data = p + MHF_IDMAP_HEADER_SIZE + (size_t)ng * MHF_IDMAP_GROUP_SIZE;
    /* a literal-only LZ4 block: token, then the first byte is label 0 */
    CHECK(p[MHF_IDMAP_HEADER_SIZE + MHF_IDMAP_G_WIDTH] == 1);
    uint8_t tok = data[0];
    CHECK((tok >> 4) >= 1);
    size_t at = 1;
    if ((tok >> 4) == 15) /* the literal length goes on in extra bytes */
        while (data[at++] == 255)
            ;
    data[at] = 255;
}

/* Two different labels among the first group's first literal bytes swap:
 * every label still a chunk of the slice and every chunk's count right,
 * only the tight check (each label the chunk of its row) sees it. */
static void swap_labels(uint8_t *p, uint64_t size) {
    (void)size;
    uint32_t ng = mhf_load_u32(p + MHF_IDMAP_GROUP_COUNT);
    uint8_t *data = p + MHF_IDMAP_HEADER_SIZE + (size_t)ng * MHF_IDMAP_GROUP_SIZE;
    size_t lit = data[0] >> 4, at = 1;
    if (lit == 15)
        for (uint8_t b = 255; b == 255; at++) {
            b = data[at];
            lit += b;
        }
    for (size_t i = 1; i < lit; i++)
        if (data[at + i] != data[at]) {
            uint8_t t = data[at];
            data[at] = data[at + i];
            data[at + i] = t;
            return;
        }
    CHECKF(0, "no two different labels among the first %zu literals", lit);
}

/* The second group's data_offset moves by one: groups no longer tile. */
static void bad_offset(uint8_t *p, uint64_t size) {
    (void)size;
    uint8_t *r = p + MHF_IDMAP_HEADER_SIZE + MHF_IDMAP_GROUP_SIZE;
    mhf_store_u64(r + MHF_IDMAP_G_DATA_OFFSET, mhf_load_u64(r + MHF_IDMAP_G_DATA_OFFSET) + 1);
}

/* A byte of the data area flipped (sum not fixed: MH_ECHECKSUM). */
static void flip(uint8_t *p, uint64_t size) { p[size - 1] ^= 0x40; }

/* fsck reports the damage: code `want`, about the id map. */
static void fsck_sees(const char *dir, int want) {
    tu_problems pr = tu_fsck(dir);
    CHECKF(pr.n >= 1 && pr.code == want && strstr(pr.msg, "id map"),
           "fsck: %d problems, first %s: %s", pr.n, mh_error_name(pr.code), pr.msg);
    printf("  fsck: %s\n", pr.msg);
}

static void first_labels(const char *dir, int want) {
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    uint32_t *labels = malloc(MH_IDMAP_GROUP_MAX * sizeof *labels);
    uint32_t first, n;
    mh_diag d = {0, 0, ""};
    int rc = mh_idmap_labels(seg_of(r, 0), 0, 0, labels, &first, &n, &d);
    CHECKF(rc == want, "mh_idmap_labels: %s (%s), expected %s", mh_error_name(rc),
           d.msg, mh_error_name(want));
    CHECK(rc == MH_OK || d.msg[0]);
    CHECK(rc != MH_ECORRUPT || strstr(d.msg, "id map"));
    /* a second call says the same (a failed check is not remembered as good) */
    rc = mh_idmap_labels(seg_of(r, 0), 0, 0, labels, &first, &n, &d);
    CHECK(rc == want);
    free(labels);
    mh_reader_close(r);
}

/* dst emptied, then a copy of src. */
static void fresh_copy(const char *src, const char *dst) {
    tu_rmtree(dst);
    CHECK(mkdir(dst, 0755) == 0);
    tu_copy_dir(src, dst);
}

/* The golden id map variants (format/golden/corrupt/idmap-*): fsck's first
 * problem, exactly (code and the words of the line), on a copy. */
static void golden_variants(void) {
    static const struct {
        const char *name;
        int code;
        const char *words[2];
    } v[] = {
        {"idmap-flip", MH_ECHECKSUM, {"id map at byte ", ": checksum mismatch: stored 0x"}},
        {"idmap-label-range", MH_ECORRUPT,
         {"id map: label ", " at id offset 3 of slice 0 is not a chunk of the slice"}},
        {"idmap-label-swap", MH_ECORRUPT,
         {"id map: slice 0 id offset 0: label ", ", its row is in chunk "}},
        {"idmap-group-count", MH_ECORRUPT,
         {"id map: group 0 (slice 0 id offset 0): count 11, expected 10", ""}},
        {"idmap-reserved", MH_ECORRUPT, {"id map: group 0: reserved bytes not zero", ""}},
    };
    char dir[512];
    tu_mkdtemp(dir, sizeof dir, "idmap-golden");
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char src[1024], name[128];
        snprintf(name, sizeof name, "corrupt/%s.store", v[i].name);
        tu_join(src, sizeof src, MH_GOLDEN_DIR, name);
        fresh_copy(src, dir);
        tu_problems pr = tu_fsck(dir);
        CHECKF(pr.n == 1 && pr.code == v[i].code && strstr(pr.msg, v[i].words[0]) &&
                   strstr(pr.msg, v[i].words[1]),
               "%s: fsck %d problems, first %s: %s", v[i].name, pr.n,
               mh_error_name(pr.code), pr.msg);
    }
    tu_rmtree(dir);
    printf("  golden id map variants: fsck's exact lines\n");
}

int main(void) {
    golden_variants();
    tu_rng rng = {2026};
    size_t n = 150000;
    mh_access *all = malloc(n * sizeof *all);
    CHECK(all);
    char dir[512];
    size_t groups;

    /* u8 labels: slices of 20000 (3 groups each), few chunks */
    gen_trace(&rng, all, n, 64);
    tu_mkdtemp(dir, sizeof dir, "idmap");
    write_store(dir, all, n, 20000, 128, 1, 0);
    CHECK(check_labels(dir, &groups) == 1);
    CHECK(groups >= 3 * (n / 20000));
    tu_problems pr = tu_fsck(dir);
    CHECKF(pr.n == 0, "fsck: %s", pr.msg);

    /* damage, sums fixed: the label check and the structure check */
    char dir2[512];
    tu_mkdtemp(dir2, sizeof dir2, "idmap-bad");
    tu_copy_dir(dir, dir2);
    damage(dir2, 1, bad_label);
    first_labels(dir2, MH_ECORRUPT);
    fsck_sees(dir2, MH_ECORRUPT);
    fresh_copy(dir, dir2);
    damage(dir2, 1, swap_labels);
    first_labels(dir2, MH_OK); /* a reader cannot tell */
    fsck_sees(dir2, MH_ECORRUPT);
    fresh_copy(dir, dir2);
    damage(dir2, 1, bad_offset);
    first_labels(dir2, MH_ECORRUPT);
    fsck_sees(dir2, MH_ECORRUPT);
    fresh_copy(dir, dir2);
    damage(dir2, 0, flip);
    first_labels(dir2, MH_ECHECKSUM);
    fsck_sees(dir2, MH_ECHECKSUM);
    tu_rmtree(dir2);
    tu_rmtree(dir);

    /* u16 labels: thousands of chunks per slice, a discard mid-segment */
    gen_trace(&rng, all, n, 1u << 20);
    tu_mkdtemp(dir, sizeof dir, "idmap16");
    write_store(dir, all, n, 20000, 1, 1, 25000);
    CHECK(check_labels(dir, &groups) == 2);
    pr = tu_fsck(dir);
    CHECKF(pr.n == 0, "fsck: %s", pr.msg);
    tu_rmtree(dir);

    /* option off: 2.1 segments without the section */
    tu_mkdtemp(dir, sizeof dir, "idmap-off");
    write_store(dir, all, 40000, 20000, 128, 0, 0);
    mh_reader *r;
    CHECK_OK(mh_reader_open(dir, &r));
    const mh_seg *seg = seg_of(r, 0);
    CHECK(seg->minor == MHF_VERSION_MINOR && !mh_idmap_present(seg));
    mh_segment_info si = {.struct_size = sizeof si};
    CHECK_OK(mh_reader_segment_info(r, 0, &si));
    CHECK(si.idmap_bytes == 0);
    uint32_t *labels = malloc(MH_IDMAP_GROUP_MAX * sizeof *labels), first, cnt;
    CHECK(mh_idmap_labels(seg, 0, 0, labels, &first, &cnt, NULL) == MH_ENOTFOUND);
    free(labels);
    mh_reader_close(r);
    tu_rmtree(dir);

    /* a bad option */
    mh_writer_options o;
    mh_writer_options_init(&o);
    o.id_map = 2;
    mh_writer *w;
    tu_mkdtemp(dir, sizeof dir, "idmap-opt");
    CHECK(mh_writer_open(dir, MH_CREATE, &o, &w) == MH_EINVAL);
    tu_rmtree(dir);
    free(all);
    printf("idmap: ok\n");
    return 0;
}
