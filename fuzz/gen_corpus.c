/*
 * gen_corpus.c - writes the seed corpus of every fuzz target (run it through
 * fuzz/gen_corpus.sh, which commits nothing by itself: the output is
 * reviewed and committed).
 *
 * Usage: fuzz_gen_corpus OUTDIR   (OUTDIR/<target>/ must exist)
 *
 * Seeds are small valid inputs made with the writer API (fuzz_build.c) and
 * hand-written trace samples; the tails that the targets read parameters
 * from (fuzz_data_producer.h: from the end, most significant byte first)
 * are built here so each seed drives the mode it is meant for.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "fuzz_build.h"
#include "fuzz_helpers.h"
#include "fuzz_store.h"
#include "import.h"
#include "internal.h"

static const char *outdir;

static void emit(const char *target, const char *name, const void *p,
                 size_t n) {
    char dir[FUZZ_PATH_MAX];
    fuzz_join(dir, sizeof dir, outdir, target);
    fuzz_mkdir(dir);
    fuzz_write_file(dir, name, p, n);
}

/* ---- parameter tails -------------------------------------------------- */

typedef struct tail {
    uint8_t b[64]; /* in the order the producer consumes them */
    size_t n;
} tail;

/* A value the producer's u64_range(min, min + range) returns as min + v. */
static void tail_push(tail *t, uint64_t v, uint64_t range) {
    unsigned nbytes = 0;
    for (uint64_t r = range; r != 0; r >>= 8)
        nbytes++;
    for (unsigned i = nbytes; i-- > 0;) {
        FUZZ_ASSERT(t->n < sizeof t->b);
        t->b[t->n++] = (uint8_t)(v >> (8 * i)); /* most significant first */
    }
}

/* payload followed by the tail, reversed (the first byte consumed is the
 * last of the file). */
static void emit_with_tail(const char *target, const char *name,
                           const void *payload, size_t len, const tail *t) {
    uint8_t *buf = fuzz_malloc(len + t->n);
    if (len)
        memcpy(buf, payload, len);
    for (size_t i = 0; i < t->n; i++)
        buf[len + i] = t->b[t->n - 1 - i];
    emit(target, name, buf, len + t->n);
    free(buf);
}

/* ---- stores ----------------------------------------------------------- */

static void emit_store_files(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    FUZZ_ASSERT(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "seg-", 4) != 0)
            continue;
        char path[FUZZ_PATH_MAX], name[FUZZ_PATH_MAX];
        fuzz_join(path, sizeof path, dir, e->d_name);
        size_t size;
        uint8_t *buf = fuzz_read_file(path, &size);
        FUZZ_ASSERT(buf != NULL);
        snprintf(name, sizeof name, "%s-%s", prefix, e->d_name);
        emit("fuzz_segment_open", name, buf, size);
        /* a torn copy: the header and half the rest */
        snprintf(name, sizeof name, "%s-%s.torn", prefix, e->d_name);
        emit("fuzz_segment_open", name, buf, 256 + (size - 256) / 2);
        free(buf);
    }
    closedir(d);
}

static void gen_stores(const char *work) {
    static const char *const names[FUZZ_STORE_KINDS] = {
        "three", "oneblock", "execsparse", "empty", "metaonly", "streams"};
    for (int k = 0; k < FUZZ_STORE_KINDS; k++) {
        char dir[FUZZ_PATH_MAX], mans[FUZZ_PATH_MAX];
        fuzz_join(dir, sizeof dir, work, names[k]);
        fuzz_join(mans, sizeof mans, work, "manifests");
        fuzz_rmtree(dir);
        fuzz_rmtree(mans);
        fuzz_mkdir(mans);
        fuzz_build_store(dir, (enum fuzz_store_kind)k, mans);
        emit_store_files(dir, names[k]);
        /* the manifest target's fixture is the "three" store: its
         * manifests list real files; the others exercise the parser */
        DIR *d = opendir(mans);
        FUZZ_ASSERT(d != NULL);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[FUZZ_PATH_MAX], name[FUZZ_PATH_MAX];
            fuzz_join(path, sizeof path, mans, e->d_name);
            size_t size;
            uint8_t *buf = fuzz_read_file(path, &size);
            FUZZ_ASSERT(buf != NULL);
            snprintf(name, sizeof name, "%s-%s", names[k], e->d_name);
            emit("fuzz_manifest", name, buf, size);
            free(buf);
        }
        closedir(d);
        fuzz_rmtree(mans);
        fuzz_rmtree(dir);
    }
}

/* ---- blocks ----------------------------------------------------------- */

/* The tail fuzz_block_decode reads: nparams, mode, "one in 64", n, bool,
 * t_base, layout, then the mode's own parameters (extra). */
static void block_tail_layout(tail *t, uint32_t mode, uint32_t n, uint32_t t_base,
                              uint32_t layout, const tail *extra) {
    tail body = {{0}, 0};
    tail_push(&body, mode, 4);
    tail_push(&body, 0, 63);      /* not the rare huge row count */
    tail_push(&body, n - 1, 511); /* n in [1, 512] */
    tail_push(&body, 0, 1);       /* small t_base */
    tail_push(&body, t_base, 100);
    tail_push(&body, layout, 4);
    for (size_t i = 0; extra && i < extra->n; i++)
        body.b[body.n++] = extra->b[i];
    t->n = 0;
    tail_push(t, body.n, 24);
    memcpy(t->b + t->n, body.b, body.n);
    t->n += body.n;
}

static void block_tail(tail *t, uint32_t mode, uint32_t n, uint32_t t_base,
                       const tail *extra) {
    block_tail_layout(t, mode, n, t_base, 0, extra);
}

/* Offset of section `type` of a 2.0 segment (SPEC.md 5.2). */
static uint64_t section_off(const uint8_t *seg, uint32_t type) {
    uint32_t n = mhf_load_u32(seg + MHF2_SEG_DIR_COUNT);
    uint32_t rsz = mhf_load_u32(seg + MHF2_SEG_DIR_RECSZ);
    const uint8_t *dir = seg + mhf_load_u64(seg + MHF2_SEG_DIR_OFF);
    for (uint32_t i = 0; i < n; i++)
        if (mhf_load_u32(dir + (size_t)i * rsz + MHF2_DIR_TYPE) == type)
            return mhf_load_u64(dir + (size_t)i * rsz + MHF2_DIR_OFFSET);
    FUZZ_ASSERT_MSG(0, "a fixture segment lacks a section");
    return 0;
}

static void gen_blocks(const char *work) {
    char dir[FUZZ_PATH_MAX];
    fuzz_join(dir, sizeof dir, work, "block");
    fuzz_rmtree(dir);
    fuzz_build_store(dir, FUZZ_STORE_ONE_BLOCK, NULL);
    char path[FUZZ_PATH_MAX], name[32];
    fuzz_segment_name(name, 0);
    fuzz_join(path, sizeof path, dir, name);
    size_t size;
    uint8_t *seg = fuzz_read_file(path, &size);
    FUZZ_ASSERT(seg != NULL);
    const uint8_t *b = seg + section_off(seg, MHF_SECT_BLOCKS);
    uint64_t off = mhf_load_u64(b + MHF_BLOCK_OFFSET);
    uint32_t comp = mhf_load_u32(b + MHF_BLOCK_COMP_SIZE);
    uint32_t raw_size = mhf_load_u32(b + MHF_BLOCK_RAW_SIZE);
    const uint8_t *sl = seg + section_off(seg, MHF_SECT_SLICES);
    uint32_t n = mhf_load_u32(sl + MHF_SLICE_COUNT);
    uint64_t t_first = mhf_load_u64(sl + MHF_SLICE_T_FIRST);
    FUZZ_ASSERT(n >= 1 && n <= 512 && t_first <= 100);
    uint8_t *raw = fuzz_malloc(raw_size);
    FUZZ_ASSERT(LZ4_decompress_safe((const char *)seg + off, (char *)raw,
                                    (int)comp, (int)raw_size) == (int)raw_size);
    tail t;
    block_tail(&t, 0, n, (uint32_t)t_first, NULL);
    emit_with_tail("fuzz_block_decode", "raw", raw, raw_size, &t);
    tail extra = {{0}, 0};
    tail_push(&extra, raw_size, mh_block_raw_bound(n));
    tail_push(&extra, 0, 7); /* the right checksum */
    block_tail(&t, 1, n, (uint32_t)t_first, &extra);
    emit_with_tail("fuzz_block_decode", "comp", seg + off, comp, &t);
    block_tail(&t, 3, n, (uint32_t)t_first, NULL);
    emit_with_tail("fuzz_block_decode", "reader-raw", raw, raw_size, &t);
    block_tail(&t, 4, n, (uint32_t)t_first, NULL);
    emit_with_tail("fuzz_block_decode", "reader-comp", seg + off, comp, &t);
    block_tail(&t, 2, 40, 0, NULL);
    emit_with_tail("fuzz_block_decode", "values", raw, raw_size, &t);
    /* the same raw block read with every layout (SPEC.md 6): the fixture
     * has stream 0 and no pc, so its blocks end before the stream column */
    static const char *const lnames[] = {"raw-full", "raw-stream", "raw-base", "raw-v1",
                                         "raw-future"};
    for (uint32_t k = 1; k < 5; k++) {
        block_tail_layout(&t, 0, n, (uint32_t)t_first, k, NULL);
        emit_with_tail("fuzz_block_decode", lnames[k], raw, raw_size, &t);
    }
    free(raw);
    free(seg);
    fuzz_rmtree(dir);
}

/* ---- sections (fuzz_section) ----------------------------------------- */

/* Bytes of section `type` of a 2.0 segment, NULL when absent. */
static const uint8_t *section_get(const uint8_t *seg, uint32_t type, size_t *len) {
    uint32_t n = mhf_load_u32(seg + MHF2_SEG_DIR_COUNT);
    uint32_t rsz = mhf_load_u32(seg + MHF2_SEG_DIR_RECSZ);
    const uint8_t *dir = seg + mhf_load_u64(seg + MHF2_SEG_DIR_OFF);
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = dir + (size_t)i * rsz;
        if (mhf_load_u32(e + MHF2_DIR_TYPE) == type) {
            *len = (size_t)mhf_load_u64(e + MHF2_DIR_BYTES);
            return seg + mhf_load_u64(e + MHF2_DIR_OFFSET);
        }
    }
    return NULL;
}

/* The tail fuzz_section reads: nparams, which, segment, type, flags. */
static void section_tail(tail *t, uint32_t which, uint32_t seg, uint32_t type,
                         uint32_t flags) {
    tail body = {{0}, 0};
    tail_push(&body, which, 19);
    tail_push(&body, seg, 1);
    tail_push(&body, type - (MHF_SECT_SRUNS + 1), 0xffff - (MHF_SECT_SRUNS + 1));
    tail_push(&body, flags, 1);
    t->n = 0;
    tail_push(t, body.n, 8);
    memcpy(t->b + t->n, body.b, body.n);
    t->n += body.n;
}

/* Segment 1's section `type` (the span nodes': position 2) replaced
 * into segment seg: fuzz_section's `which`, named NAME-seg. */
static void emit_seg1_section(const char *dir, uint32_t type, uint32_t which, uint32_t seg,
                              const char *what, tail *t) {
    char sname[64], path[FUZZ_PATH_MAX], name[64];
    fuzz_segment_name(sname, 1);
    fuzz_join(path, sizeof path, dir, sname);
    size_t ssize;
    uint8_t *sbuf = fuzz_read_file(path, &ssize);
    FUZZ_ASSERT(sbuf != NULL);
    size_t slen = 0;
    const uint8_t *sp = section_get(sbuf, type, &slen);
    FUZZ_ASSERT_MSG(sp != NULL, "the streams fixture's segment 1 lacks a span node");
    section_tail(t, which, seg, MHF_SECT_SRUNS + 1, 0);
    snprintf(name, sizeof name, "%s-%u", what, seg);
    emit_with_tail("fuzz_section", name, sp, slen, t);
    free(sbuf);
}

static void gen_sections(const char *work) {
    char dir[FUZZ_PATH_MAX], path[FUZZ_PATH_MAX], name[64];
    fuzz_join(dir, sizeof dir, work, "sections");
    fuzz_rmtree(dir);
    fuzz_build_store(dir, FUZZ_STORE_STREAMS, NULL);
    static const uint32_t types[9] = {MHF_SECT_DICT, MHF_SECT_SLICES, MHF_SECT_SUMMARY, 0,
                                      MHF_SECT_IDMAP, 0, MHF_SECT_ASET, 0, MHF_SECT_APOST};
    static const char *const tnames[9] = {"dict", "slices", "summary", "", "idmap", "", "aset",
                                          "", "apost"};
    for (uint32_t seg = 0; seg < 2; seg++) {
        fuzz_segment_name(name, seg);
        fuzz_join(path, sizeof path, dir, name);
        size_t size;
        uint8_t *buf = fuzz_read_file(path, &size);
        FUZZ_ASSERT(buf != NULL);
        tail t;
        for (uint32_t w = 0; w < 9; w++) {
            if (w == 3 || w == 5 || w == 7)
                continue; /* the unknown types and the flips: below */
            size_t len = 0;
            /* segment 1's address postings are a section 14 (2.6) */
            const uint8_t *p = section_get(buf, types[w], &len);
            if (!p && types[w] == MHF_SECT_APOST)
                p = section_get(buf, MHF_SECT_APOSTW, &len);
            FUZZ_ASSERT_MSG(p != NULL, "the streams fixture lacks a section");
            section_tail(&t, w, seg, MHF_SECT_SRUNS + 1, 0);
            snprintf(name, sizeof name, "%s-%u", tnames[w], seg);
            emit_with_tail("fuzz_section", name, p, len, &t);
        }
        /* unknown sections: skipped when not required, refused when required */
        static const char blob[] = "a section of a later minor";
        /* the id map with bytes flipped: (offset u16, mask) triples */
        static const uint8_t flips[] = {40, 0, 0x01, 70, 0, 0x80, 0x90, 0, 0x04};
        section_tail(&t, 5, seg, MHF_SECT_SRUNS + 1, 0);
        snprintf(name, sizeof name, "idmap-flip-%u", seg);
        emit_with_tail("fuzz_section", name, flips, sizeof flips, &t);
        /* the address set with bytes flipped (its header, run table, data) */
        static const uint8_t aflips[] = {20, 0, 0x01, 90, 0, 0x40, 0x70, 0, 0x02};
        section_tail(&t, 7, seg, MHF_SECT_SRUNS + 1, 0);
        snprintf(name, sizeof name, "aset-flip-%u", seg);
        emit_with_tail("fuzz_section", name, aflips, sizeof aflips, &t);
        /* the address postings with bytes flipped (header, runs, data) */
        static const uint8_t pflips[] = {0, 0, 0x01, 100, 0, 0x08, 0x60, 0, 0x10};
        section_tail(&t, 9, seg, MHF_SECT_SRUNS + 1, 0);
        snprintf(name, sizeof name, "apost-flip-%u", seg);
        emit_with_tail("fuzz_section", name, pflips, sizeof pflips, &t);
        /* the span address set: segment 1's (position 2) replaced into
         * either segment, and flipped (header, run table, data) */
        emit_seg1_section(dir, MHF_SECT_SPAN, 10, seg, "span", &t);
        /* the stream postings (2.7; both segments have streams 0-2):
         * replaced by the real ones, and flipped (header, entries, a body) */
        {
            size_t plen = 0;
            const uint8_t *pp = section_get(buf, MHF_SECT_SPOST, &plen);
            FUZZ_ASSERT_MSG(pp != NULL, "the streams fixture lacks stream postings");
            section_tail(&t, 14, seg, MHF_SECT_SRUNS + 1, 0);
            snprintf(name, sizeof name, "spost-%u", seg);
            emit_with_tail("fuzz_section", name, pp, plen, &t);
            static const uint8_t qflips[] = {4, 0, 0x01, 40, 0, 0x02, 0xa0, 0, 0x10};
            section_tail(&t, 15, seg, MHF_SECT_SRUNS + 1, 0);
            snprintf(name, sizeof name, "spost-flip-%u", seg);
            emit_with_tail("fuzz_section", name, qflips, sizeof qflips, &t);
        }
        /* the span stream address set (2.8): segment 1's (position 2)
         * replaced into either segment, and flipped (header, entries, a
         * set) */
        {
            emit_seg1_section(dir, MHF_SECT_SSPAN, 16, seg, "sspan", &t);
            static const uint8_t tflips[] = {4, 0, 0x01, 52, 0, 0x10, 0x80, 0, 0x04};
            section_tail(&t, 17, seg, MHF_SECT_SRUNS + 1, 0);
            snprintf(name, sizeof name, "sspan-flip-%u", seg);
            emit_with_tail("fuzz_section", name, tflips, sizeof tflips, &t);
        }
        /* the stream id runs (2.8): replaced by the real ones, and flipped
         * (header, entries, a body's groups) */
        {
            size_t rlen = 0;
            const uint8_t *rp = section_get(buf, MHF_SECT_SRUNS, &rlen);
            FUZZ_ASSERT_MSG(rp != NULL, "the streams fixture lacks stream id runs");
            section_tail(&t, 18, seg, MHF_SECT_SRUNS + 1, 0);
            snprintf(name, sizeof name, "sruns-%u", seg);
            emit_with_tail("fuzz_section", name, rp, rlen, &t);
            static const uint8_t rflips[] = {4, 0, 0x01, 48, 0, 0x02, 0x70, 0, 0x01};
            section_tail(&t, 19, seg, MHF_SECT_SRUNS + 1, 0);
            snprintf(name, sizeof name, "sruns-flip-%u", seg);
            emit_with_tail("fuzz_section", name, rflips, sizeof rflips, &t);
        }
        static const uint8_t sflips[] = {8, 0, 0x01, 52, 0, 0x02, 0x90, 0, 0x20};
        section_tail(&t, 11, seg, MHF_SECT_SRUNS + 1, 0);
        snprintf(name, sizeof name, "span-flip-%u", seg);
        emit_with_tail("fuzz_section", name, sflips, sizeof sflips, &t);
        section_tail(&t, 3, seg, MHF_SECT_SRUNS + 1, 0);
        snprintf(name, sizeof name, "unknown-%u", seg);
        emit_with_tail("fuzz_section", name, blob, sizeof blob, &t);
        section_tail(&t, 3, seg, 0x100, 1);
        snprintf(name, sizeof name, "unknown-required-%u", seg);
        emit_with_tail("fuzz_section", name, blob, sizeof blob, &t);
        free(buf);
    }
    fuzz_rmtree(dir);
}

/* ---- traces ----------------------------------------------------------- */

static const char lackey_sample[] =
    "==12345== Lackey, an example Valgrind tool\n"
    "==12345== Command: ./a.out\n"
    "==12345==\n"
    "I  04000a40,3\n"
    " S 1ffefffd98,8\n"
    "I  04000a43,5\n"
    " L 04027d30,8\n"
    " M 0402a1b8,4\n"
    "--12345-- WARNING: unhandled amd64-linux syscall: 334\n"
    "I  04000a48,2\n"
    " L 1ffefffda0,8\r\n"
    " S ffffffffffffffff,1\n"
    "I  04000a4a,7\n"
    "==12345== \n";

static const char csv_sample[] =
    MH_CSV_HEADER "\n"
    "0,0x7ffe0010,0x1000,8,r\n"
    "0,,0x2000,4,w\n"
    "1,140737488289808,4096,1,x\r\n"
    "1,0X10,0x10,16,w\n"
    "5,,18446744073709551615,1,r\n";

/* Text followed by the tail fuzz_import_run reads: nparams, flags, then
 * one piece size per byte. */
static void emit_trace(const char *target, const char *name, const char *text,
                       unsigned flags, const uint8_t *pieces, size_t npieces) {
    tail body = {{0}, 0}, t = {{0}, 0};
    tail_push(&body, flags, 255);
    for (size_t i = 0; i < npieces; i++)
        tail_push(&body, pieces[i], 255);
    tail_push(&t, body.n, 66);
    memcpy(t.b + t.n, body.b, body.n);
    t.n += body.n;
    emit_with_tail(target, name, text, strlen(text), &t);
}

static void gen_traces(void) {
    static const uint8_t cuts[] = {1, 7, 0, 13, 2, 0x81, 5};
    emit_trace("fuzz_import_lackey", "sample", lackey_sample, 0, NULL, 0);
    emit_trace("fuzz_import_lackey", "sample-exec-cut", lackey_sample,
               MH_IMPORT_EXEC, cuts, sizeof cuts);
    emit_trace("fuzz_import_lackey", "bad-size", "I  0400,3\n L 10,0\n", 0,
               NULL, 0);
    emit_trace("fuzz_import_lackey", "no-newline", "I  0400,3\n S 10,4", 1,
               cuts, 3);
    emit_trace("fuzz_import_csv", "sample", csv_sample, 0, NULL, 0);
    emit_trace("fuzz_import_csv", "sample-cut", csv_sample, 0, cuts,
               sizeof cuts);
    emit_trace("fuzz_import_csv", "bad-order",
               MH_CSV_HEADER "\n5,,16,1,r\n4,,16,1,r\n", 0, NULL, 0);
    emit_trace("fuzz_import_csv", "header-only", MH_CSV_HEADER, 0, NULL, 0);
}

/* ---- differential programs ---------------------------------------------- */

static void gen_programs(void) {
    static const size_t lens[] = {16, 200, 1000, 4000};
    uint64_t s = 99;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t *buf = fuzz_malloc(lens[i]);
        for (size_t k = 0; k < lens[i]; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            buf[k] = (uint8_t)(s >> 56);
        }
        char name[32];
        snprintf(name, sizeof name, "random-%zu", lens[i]);
        emit("fuzz_differential", name, buf, lens[i]);
        free(buf);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    outdir = argv[1];
    fuzz_mkdir(outdir);
    char work[FUZZ_PATH_MAX];
    fuzz_join(work, sizeof work, fuzz_workdir(), "gen");
    fuzz_mkdir(work);
    gen_stores(work);
    gen_blocks(work);
    gen_sections(work);
    gen_traces();
    gen_programs();
    return 0;
}
