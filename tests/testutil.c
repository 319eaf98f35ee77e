/*
 * testutil.c - shared test helpers; see testutil.h. The oracle they check
 * answers against is tests/oracle_lib (oracle.h).
 */
#define _GNU_SOURCE /* memmem */
#include "testutil.h"

#include "mh_format.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Thread_local char tu_context[512];
char tu_note[512];

void tu_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (tu_context[0])
        fprintf(stderr, "  context: %s\n", tu_context);
    if (tu_note[0])
        fprintf(stderr, "  note: %s\n", tu_note);
    fflush(stderr);
    exit(1);
}

/* ---- PRNG ---------------------------------------------------------------- */
uint64_t tu_next(tu_rng *r) {
    uint64_t z = (r->x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t tu_below(tu_rng *r, uint64_t n) {
    /* rejection keeps it uniform; n is often tiny, rarely near 2^64 */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do
        v = tu_next(r);
    while (v >= lim);
    return v % n;
}

uint64_t tu_range(tu_rng *r, uint64_t lo, uint64_t hi) {
    if (lo == 0 && hi == UINT64_MAX)
        return tu_next(r);
    return lo + tu_below(r, hi - lo + 1);
}

/* ---- directories and files ----------------------------------------------- */
void tu_join(char *buf, size_t cap, const char *dir, const char *name) {
    int k = snprintf(buf, cap, "%s/%s", dir, name);
    CHECKF(k > 0 && (size_t)k < cap, "path too long: %s/%s", dir, name);
}

void tu_mkdtemp(char *buf, size_t cap, const char *tag) {
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    int k = snprintf(buf, cap, "%s/mh-%s-XXXXXX", base, tag);
    CHECKF(k > 0 && (size_t)k < cap, "temporary path too long");
    CHECKF(mkdtemp(buf) != NULL, "mkdtemp %s: %s", buf, strerror(errno));
}

void tu_rmtree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                char sub[4096];
                tu_join(sub, sizeof sub, path, e->d_name);
                tu_rmtree(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

unsigned char *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    CHECK(buf != NULL);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            CHECK(buf != NULL);
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        if (k == 0)
            break;
        n += k;
    }
    CHECKF(!ferror(f), "read %s failed", path);
    fclose(f);
    *len = n;
    return buf;
}

void tu_summary_last_range(const char *path, uint64_t *a, uint64_t *b) {
    size_t len;
    unsigned char *p = tu_read_file(path, &len);
    CHECK(p != NULL);
    uint64_t off, size;
    uint32_t count;
    CHECK(mhf_seg_find(p, len, MHF_SECT_SUMMARY, &off, &size, &count));
    CHECK(size >= MHF_SUM_HEADER_SIZE);
    const unsigned char *h = p + off;
    uint32_t shift = mhf_load_u32(h + MHF_SUM_SHIFT), ne = mhf_load_u32(h + MHF_SUM_ENTRY_COUNT);
    uint32_t esz = mhf_load_u32(h + MHF_SUM_ENTRY_SIZE_OFF);
    CHECK(ne >= 1 && shift < 64 && MHF_SUM_HEADER_SIZE + (uint64_t)ne * esz <= size);
    uint64_t g = mhf_load_u64(h + MHF_SUM_HEADER_SIZE + (size_t)(ne - 1) * esz + MHF_SUM_E_GRANULE);
    *a = g << shift;
    *b = *a + ((UINT64_C(1) << shift) - 1);
    free(p);
}

void tu_write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    CHECKF(f != NULL, "cannot create %s: %s", path, strerror(errno));
    CHECKF(fwrite(data, 1, len, f) == len, "write %s failed", path);
    CHECKF(fclose(f) == 0, "close %s failed", path);
}

void tu_copy_dir(const char *src, const char *dst) {
    DIR *d = opendir(src);
    CHECKF(d != NULL, "cannot open directory %s: %s", src, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char from[4096], to[4096];
        struct stat st;
        tu_join(from, sizeof from, src, e->d_name);
        if (stat(from, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        tu_join(to, sizeof to, dst, e->d_name);
        size_t len;
        unsigned char *data = tu_read_file(from, &len);
        CHECKF(data != NULL, "cannot read %s", from);
        tu_write_file(to, data, len);
        free(data);
    }
    closedir(d);
}

static void diff_fail(const char *what, const mh_query *q, size_t max,
                      const mh_access *got, size_t ngot, const mh_access *want,
                      size_t nwant) {
    fprintf(stderr, "%s: answer differs from the oracle\nquery: ", what);
    oracle_query oq;
    oracle_query_wrap(&oq, q);
    oracle_print_query(stderr, &oq);
    fprintf(stderr, " max %zu", max);
    /* the format 2.0 filters, when set */
    if (q->struct_size >= sizeof *q && q->streams) {
        fprintf(stderr, " streams");
        for (uint32_t i = 0; i < q->nstreams; i++)
            fprintf(stderr, "%s%u", i ? "," : " ", q->streams[i]);
    }
    if (q->struct_size >= sizeof *q && (q->filter & MH_FILTER_PC))
        fprintf(stderr, " pc [0x%llx, 0x%llx]", (unsigned long long)q->pc_first,
                (unsigned long long)q->pc_last);
    if (q->struct_size >= sizeof *q && (q->filter & MH_FILTER_WINDOW))
        fprintf(stderr, " window %llu", (unsigned long long)q->window);
    fputc('\n', stderr);
    size_t first = 0;
    while (first < ngot && first < nwant && oracle_same_access(&got[first], &want[first]))
        first++;
    fprintf(stderr, "library returned %zu, oracle %zu, first difference at %zu\n",
            ngot, nwant, first);
    size_t from = first > 3 ? first - 3 : 0;
    for (size_t i = from; i < first + 4 && (i < ngot || i < nwant); i++) {
        if (i < ngot) {
            fprintf(stderr, "  lib[%zu]    ", i);
            oracle_print_access(stderr, &got[i]);
            fputc('\n', stderr);
        }
        if (i < nwant) {
            fprintf(stderr, "  oracle[%zu] ", i);
            oracle_print_access(stderr, &want[i]);
            fputc('\n', stderr);
        }
    }
    tu_fail(__FILE__, __LINE__, "%s mismatch", what);
}

static int same_list(const mh_access *a, const mh_access *b, size_t n) {
    return oracle_equal(a, n, b, n, NULL);
}

/* tu_check_query's answer buffers, kept between questions by whichever
 * thread holds the lock (others allocate their own): a fresh max-sized
 * pair a question took most of edge's time under ASan, whose allocator
 * maps and marks every large block anew */
static pthread_mutex_t scratch_mu = PTHREAD_MUTEX_INITIALIZER;
static mh_access *scratch_got, *scratch_want;
static size_t scratch_cap;

size_t tu_check_query(const mh_reader *r, const mh_access *all, size_t n,
                      const mh_query *q, size_t max) {
    size_t cap = max ? max : 1;
    CHECK(cap < SIZE_MAX / sizeof(mh_access));
    int shared = pthread_mutex_trylock(&scratch_mu) == 0;
    mh_access *got, *want;
    if (shared && scratch_cap < cap) {
        free(scratch_got);
        free(scratch_want);
        scratch_got = malloc(cap * sizeof *got);
        scratch_want = malloc(cap * sizeof *want);
        scratch_cap = scratch_got && scratch_want ? cap : 0;
        CHECK(scratch_cap);
    }
    if (shared) {
        /* the last cap of them: a write past max still leaves the block */
        got = scratch_got + (scratch_cap - cap);
        want = scratch_want + (scratch_cap - cap);
    } else {
        got = malloc(cap * sizeof *got);
        want = malloc(cap * sizeof *want);
    }
    CHECK(got && want);
    size_t ngot = (size_t)-1;
    CHECK_OK(mh_query_run(r, q, got, max, &ngot));
    size_t nwant = oracle_answer(all, n, q, want, max);
    if (ngot != nwant || !same_list(got, want, nwant))
        diff_fail("mh_query_run", q, max, got, ngot > max ? 0 : ngot, want, nwant);
    if (shared) {
        pthread_mutex_unlock(&scratch_mu);
    } else {
        free(got);
        free(want);
    }
    return nwant;
}

void tu_check_cursor(const mh_reader *r, const mh_access *all, size_t n,
                     const mh_query *q, size_t limit, tu_rng *rng) {
    tu_check_cursor_pieces(r, all, n, q, limit, 0, rng);
}

void tu_check_cursor_pieces(const mh_reader *r, const mh_access *all, size_t n,
                            const mh_query *q, size_t limit, size_t max_piece,
                            tu_rng *rng) {
    mh_cursor *c = NULL;
    CHECK_OK(mh_cursor_open(r, q, &c));
    CHECK(limit < SIZE_MAX / sizeof(mh_access) - 1);
    mh_access *got = malloc((limit + 1) * sizeof *got); /* as tu_check_query */
    mh_access *want = malloc((limit + 1) * sizeof *want);
    CHECK(got && want && c);
    size_t total = 0;
    int ended = 0;
    while (total < limit) {
        size_t room = limit - total;
        size_t ask = max_piece ? 1 + (size_t)tu_below(rng, max_piece)
                               : 1 + (size_t)tu_below(rng, tu_below(rng, 4) == 0 ? 1000 : 64);
        if (ask > room)
            ask = room;
        size_t k = (size_t)-1;
        CHECK_OK(mh_cursor_next(c, got + total, ask, &k));
        CHECKF(k <= ask, "mh_cursor_next returned %zu > max %zu", k, ask);
        if (k == 0) {
            ended = 1;
            break;
        }
        total += k;
    }
    /* one more than returned tells whether the cursor really ended */
    size_t nwant = oracle_answer(all, n, q, want, total + 1);
    if (ended) {
        if (nwant != total || !same_list(got, want, total))
            diff_fail("cursor (ended)", q, total, got, total, want, nwant);
        /* an ended cursor stays ended */
        size_t k = (size_t)-1;
        CHECK_OK(mh_cursor_next(c, got, 1, &k));
        CHECK(k == 0);
    } else {
        if (nwant < total || !same_list(got, want, total))
            diff_fail("cursor", q, total, got, total, want, nwant < total ? nwant : total);
    }
    mh_cursor_close(c);
    free(got);
    free(want);
}

void tu_check_chain(const mh_reader *r, const mh_access *all, size_t n,
                    const mh_query *q, int pages, tu_rng *rng) {
    size_t cap = (size_t)pages * 1000 + 1;
    mh_access *chain = calloc(cap, sizeof *chain);
    mh_access *want = calloc(cap, sizeof *want);
    CHECK(chain && want);
    mh_query cur = *q;
    size_t total = 0;
    for (int p = 0; p < pages; p++) {
        size_t max = 1 + (size_t)tu_below(rng, tu_below(rng, 3) == 0 ? 1000 : 20);
        size_t k = tu_check_query(r, all, n, &cur, max);
        /* the library's answer equals the oracle's; take the oracle's */
        oracle_answer(all, n, &cur, chain + total, k);
        total += k;
        if (k < max)
            break; /* the end: nothing left to resume */
        oracle_resume(&cur, &chain[total - 1]);
    }
    /* the pages together are the answer to the first query */
    size_t nwant = oracle_answer(all, n, q, want, total);
    CHECKF(nwant == total && same_list(chain, want, total),
           "resume chain is not the continuation (%zu pages)", (size_t)pages);
    free(chain);
    free(want);
}

/* ---- stats and introspection --------------------------------------------- */
typedef struct op_span {
    size_t first, count; /* chunks of one op within a slice, by index */
} op_span;

static void check_slice(const mh_reader *r, size_t seg, size_t sl,
                        const mh_slice_info *si, const mh_access *all,
                        uint32_t rows_per_block) {
    uint64_t id0 = si->id_first;
    CHECK(si->accesses >= 1);
    CHECK(si->transition_first == all[id0].transition);
    CHECK(si->transition_last == all[id0 + si->accesses - 1].transition);
    uint32_t ops[MH_OP_COUNT] = {0};
    for (uint64_t i = id0; i < id0 + si->accesses; i++)
        ops[all[i].op]++;
    for (int o = 0; o < MH_OP_COUNT; o++)
        CHECKF(si->op_counts[o] == ops[o], "segment %zu slice %zu op %d count %u, data %u",
               seg, sl, o, si->op_counts[o], ops[o]);
    CHECKF(si->blocks == (si->accesses + rows_per_block - 1) / rows_per_block,
           "segment %zu slice %zu: %u blocks for %u rows", seg, sl, si->blocks,
           si->accesses);
    /* chunks: grouped per op, in address order, non-overlapping, each
     * access inside exactly one chunk of its op */
    mh_chunk_info *ch = calloc(si->chunks ? si->chunks : 1, sizeof *ch);
    uint32_t *counted = calloc(si->chunks ? si->chunks : 1, sizeof *counted);
    CHECK(ch && counted);
    /* chunk indexes of each op, in stored order */
    uint32_t *byop = calloc(si->chunks ? si->chunks : 1, sizeof *byop);
    CHECK(byop != NULL);
    uint32_t opn[MH_OP_COUNT] = {0}, opstart[MH_OP_COUNT] = {0};
    uint64_t sum = 0;
    for (uint32_t k = 0; k < si->chunks; k++) {
        ch[k].struct_size = sizeof ch[k];
        CHECK_OK(mh_reader_chunk_info(r, seg, si->chunk_first + k, &ch[k]));
        CHECK(ch[k].op < MH_OP_COUNT);
        CHECK(ch[k].phy_first <= ch[k].phy_last);
        CHECK(ch[k].accesses >= 1);
        CHECK(ch[k].id_first >= id0 && ch[k].id_last < id0 + si->accesses);
        CHECK(ch[k].id_first <= ch[k].id_last);
        /* SPEC 5.3: sorted by (op, phy_first), rows tiled in that order */
        CHECKF(k == 0 || ch[k].op >= ch[k - 1].op,
               "segment %zu slice %zu: chunk %u is not in op order", seg, sl, k);
        CHECKF(ch[k].row_first == sum, "segment %zu slice %zu: chunk %u starts at row %u, "
               "expected %llu", seg, sl, k, ch[k].row_first, (unsigned long long)sum);
        sum += ch[k].accesses;
        opn[ch[k].op]++;
    }
    CHECK(sum == si->accesses);
    for (int o = 1; o < MH_OP_COUNT; o++)
        opstart[o] = opstart[o - 1] + opn[o - 1];
    {
        uint32_t fill[MH_OP_COUNT] = {0};
        for (uint32_t k = 0; k < si->chunks; k++) {
            uint8_t o = ch[k].op;
            uint32_t at = opstart[o] + fill[o]++;
            byop[at] = k;
            if (fill[o] > 1)
                CHECKF(ch[byop[at - 1]].phy_last < ch[k].phy_first,
                       "segment %zu slice %zu: chunks %u and %u of op %u overlap or are "
                       "out of address order", seg, sl, byop[at - 1], k, o);
        }
    }
    for (uint64_t i = id0; i < id0 + si->accesses; i++) {
        const mh_access *a = &all[i];
        uint64_t last = a->physical + (a->size - 1);
        /* the last chunk of the op starting at or before physical */
        uint32_t lo = opstart[a->op], hi = opstart[a->op] + opn[a->op];
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (ch[byop[mid]].phy_first <= a->physical)
                lo = mid + 1;
            else
                hi = mid;
        }
        CHECKF(lo > opstart[a->op] && a->physical <= ch[byop[lo - 1]].phy_last,
               "access %llu is in no chunk of segment %zu slice %zu",
               (unsigned long long)i, seg, sl);
        uint32_t found = byop[lo - 1];
        const mh_chunk_info *c = &ch[found];
        CHECKF(last <= c->phy_last, "access %llu ends after its chunk",
               (unsigned long long)i);
        CHECK(c->id_first <= i && i <= c->id_last);
        CHECK(c->transition_first <= a->transition && a->transition <= c->transition_last);
        counted[found]++;
    }
    free(byop);
    for (uint32_t k = 0; k < si->chunks; k++) {
        CHECKF(counted[k] == ch[k].accesses,
               "segment %zu slice %zu chunk %u: %u accesses recorded, %u found",
               seg, sl, k, ch[k].accesses, counted[k]);
        CHECK(ch[k].transition_first == all[ch[k].id_first].transition);
        CHECK(ch[k].transition_last == all[ch[k].id_last].transition);
    }
    free(ch);
    free(counted);
}

void tu_check_stats(const mh_reader *r, const mh_access *all, size_t n) {
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    CHECKF(st.accesses == n, "stats.accesses %llu, appended %zu",
           (unsigned long long)st.accesses, n);
    uint64_t ops[MH_OP_COUNT] = {0};
    for (size_t i = 0; i < n; i++)
        ops[all[i].op]++;
    for (int o = 0; o < MH_OP_COUNT; o++)
        CHECK(st.op_counts[o] == ops[o]);
    CHECK(st.transition_first == (n ? all[0].transition : 0));
    CHECK(st.transition_last == (n ? all[n - 1].transition : 0));
    size_t segs = mh_reader_segment_count(r);
    CHECK(st.segments == segs);
    uint64_t id = 0, slices = 0, chunks = 0, blocks = 0, comp = 0, raw = 0, bytes = 0;
    for (size_t s = 0; s < segs; s++) {
        mh_segment_info si = {.struct_size = sizeof si};
        CHECK_OK(mh_reader_segment_info(r, s, &si));
        CHECKF(si.id_first == id, "segment %zu starts at id %llu, expected %llu", s,
               (unsigned long long)si.id_first, (unsigned long long)id);
        CHECK(si.id_first + si.accesses <= n);
        /* a 1.0 store (the golden compatibility fixture) reads as 1.0 */
        CHECK(si.version_major == MH_FORMAT_MAJOR || si.version_major == 1);
        CHECK(si.file_name != NULL);
        if (si.accesses) { /* a commit of metadata alone has no access */
            CHECK(si.transition_first == all[si.id_first].transition);
            CHECK(si.transition_last == all[si.id_first + si.accesses - 1].transition);
        } else {
            CHECK(si.slices == 0 && si.chunks == 0 && si.blocks == 0);
        }
        uint64_t sops[MH_OP_COUNT] = {0};
        for (uint64_t i = si.id_first; i < si.id_first + si.accesses; i++)
            sops[all[i].op]++;
        for (int o = 0; o < MH_OP_COUNT; o++)
            CHECK(si.op_counts[o] == sops[o]);
        CHECK(si.rows_per_block >= 1);
        uint64_t sid = si.id_first, sblocks = 0;
        uint32_t next_chunk = 0, next_block = 0;
        for (size_t k = 0; k < si.slices; k++) {
            mh_slice_info sl = {.struct_size = sizeof sl};
            CHECK_OK(mh_reader_slice_info(r, s, k, &sl));
            CHECKF(sl.id_first == sid, "segment %zu slice %zu starts at id %llu, expected %llu",
                   s, k, (unsigned long long)sl.id_first, (unsigned long long)sid);
            CHECK(sl.chunk_first == next_chunk && sl.block_first == next_block);
            check_slice(r, s, k, &sl, all, si.rows_per_block);
            sid += sl.accesses;
            next_chunk += sl.chunks;
            next_block += sl.blocks;
            sblocks += sl.blocks;
        }
        CHECK(sid == si.id_first + si.accesses);
        CHECK(next_chunk == si.chunks && sblocks == si.blocks);
        CHECK_RC(mh_reader_slice_info(r, s, si.slices, &(mh_slice_info){.struct_size = sizeof(mh_slice_info)}), MH_EINVAL);
        CHECK_RC(mh_reader_chunk_info(r, s, si.chunks, &(mh_chunk_info){.struct_size = sizeof(mh_chunk_info)}), MH_EINVAL);
        id += si.accesses;
        slices += si.slices;
        chunks += si.chunks;
        blocks += si.blocks;
        comp += si.compressed_bytes;
        raw += si.raw_bytes;
        bytes += si.file_bytes;
    }
    CHECK(id == n);
    CHECK(st.slices == slices && st.chunks == chunks && st.blocks == blocks);
    CHECK(st.compressed_bytes == comp && st.raw_bytes == raw);
    CHECK(st.file_bytes >= bytes); /* plus the manifest */
    CHECK_RC(mh_reader_segment_info(r, segs, &(mh_segment_info){.struct_size = sizeof(mh_segment_info)}), MH_EINVAL);
}

/* ---- random queries ---------------------------------------------------- */
static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_sub(uint64_t a, uint64_t b) { return a < b ? 0 : a - b; }

static uint64_t random_transition(tu_rng *rng, const mh_access *all, size_t n) {
    uint64_t first = n ? all[0].transition : 0, last = n ? all[n - 1].transition : 0;
    switch (tu_below(rng, 12)) {
    case 0: return 0;
    case 1: return UINT64_MAX;
    case 2: return sat_sub(first, 1);
    case 3: return sat_add(last, 1);
    case 4: return tu_next(rng);
    case 5: return first;
    case 6: return last;
    default: break;
    }
    if (n == 0)
        return tu_next(rng);
    uint64_t t = all[tu_below(rng, n)].transition;
    switch (tu_below(rng, 4)) {
    case 0: return sat_sub(t, 1);
    case 1: return sat_add(t, 1);
    default: return t;
    }
}

static uint64_t random_id(tu_rng *rng, size_t n) {
    switch (tu_below(rng, 10)) {
    case 0: return 0;
    case 1: return UINT64_MAX;
    case 2: return n;
    case 3: return n + 1 + tu_below(rng, 100);
    case 4: return n ? n - 1 : 0;
    case 5: return tu_next(rng);
    default: return n ? tu_below(rng, n) : 0;
    }
}

/* Index of the first access on the query's side of its start, as a
 * position to put an end near (n when none). */
static uint64_t start_index(const mh_access *all, size_t n, const mh_query *q) {
    int fwd = q->direction == MH_FORWARD;
    if (q->start_kind == MH_FROM_ID)
        return fwd ? sat_add(q->start, 1) : sat_sub(q->start, 1);
    size_t i = fwd ? oracle_lower_bound(all, n, q->start)
                   : oracle_upper_bound(all, n, q->start);
    return fwd ? i : (i ? i - 1 : 0);
}

/* Half of the queries get an end bound: at the start (one access or one
 * transition), just on the far side of it (empty), a little or a lot past
 * it, or anywhere; of the start's kind or of the other. */
static void random_end(tu_rng *rng, const mh_access *all, size_t n, mh_query *q) {
    if (tu_below(rng, 2))
        return;
    q->end_kind = tu_below(rng, 2) ? MH_END_TRANSITION : MH_END_ID;
    int by_t = q->end_kind == MH_END_TRANSITION, fwd = q->direction == MH_FORWARD;
    uint64_t anchor; /* the start, in the end's unit */
    if ((q->start_kind == MH_FROM_TRANSITION) == by_t) {
        anchor = q->start;
    } else {
        uint64_t i = start_index(all, n, q);
        anchor = by_t ? (n ? all[i < n ? i : n - 1].transition : 0) : i;
    }
    uint64_t span = by_t ? (n ? all[n - 1].transition - all[0].transition : 0) : n;
    uint64_t d;
    switch (tu_below(rng, 10)) {
    case 0: d = 0; break;                                  /* end == start */
    case 1:                                                /* before the start */
        d = 1 + tu_below(rng, 3);
        q->end = fwd ? sat_sub(anchor, d) : sat_add(anchor, d);
        return;
    case 2: d = 1 + tu_below(rng, 16); break;
    case 3: d = tu_below(rng, span / 100 + 1); break;
    case 4: d = tu_below(rng, span / 10 + 1); break;
    case 5: d = tu_below(rng, span / 2 + 1); break;
    case 6: d = UINT64_MAX; break;                         /* the far extreme */
    default:
        q->end = by_t ? random_transition(rng, all, n) : random_id(rng, n);
        return;
    }
    q->end = fwd ? sat_add(anchor, d) : sat_sub(anchor, d);
}

void tu_random_query(tu_rng *rng, const mh_access *all, size_t n, mh_query *q,
                     size_t *max) {
    mh_query_init(q);
    q->direction = tu_below(rng, 2) ? MH_BACKWARD : MH_FORWARD;
    if (tu_below(rng, 3) == 0) {
        q->start_kind = MH_FROM_ID;
        q->start = random_id(rng, n);
    } else {
        q->start_kind = MH_FROM_TRANSITION;
        q->start = random_transition(rng, all, n);
    }
    /* address range */
    static const uint64_t widths[] = {1, 2, 4, 8, 16, 64, 256, 4096, 65536,
                                      1ull << 20, 1ull << 24, 1ull << 32, 1ull << 40};
    uint64_t kind = tu_below(rng, 20);
    if (kind == 0) {
        q->addr_first = 0;
        q->addr_last = UINT64_MAX;
    } else if (kind == 1) {
        q->addr_first = q->addr_last = tu_below(rng, 2) ? 0 : UINT64_MAX;
    } else if (kind == 2) {
        q->addr_first = tu_next(rng);
        q->addr_last = UINT64_MAX;
    } else if (kind == 3) {
        q->addr_first = 0;
        q->addr_last = tu_next(rng);
    } else {
        uint64_t w = widths[tu_below(rng, sizeof widths / sizeof widths[0])];
        if (tu_below(rng, 3) == 0)
            w = 1 + tu_below(rng, w); /* odd widths too */
        uint64_t centre;
        if (n && kind > 5) {
            const mh_access *a = &all[tu_below(rng, n)];
            centre = a->physical + tu_below(rng, a->size); /* a byte it touched */
        } else {
            centre = tu_next(rng);
        }
        q->addr_first = sat_sub(centre, tu_below(rng, w));
        q->addr_last = sat_add(q->addr_first, w - 1);
    }
    q->ops = 1 + (uint32_t)tu_below(rng, MH_OPS_ALL);
    random_end(rng, all, n, q);
    switch (tu_below(rng, 4)) {
    case 0: *max = 1; break;
    case 1: *max = 2 + (size_t)tu_below(rng, 9); break;
    case 2: *max = 11 + (size_t)tu_below(rng, 90); break;
    default: *max = 101 + (size_t)tu_below(rng, 900); break;
    }
}

static void describe(const mh_query *q, size_t max, size_t i, uint64_t seed) {
    oracle_query oq;
    oracle_query_wrap(&oq, q);
    char text[400];
    oracle_format_query(text, sizeof text, &oq);
    snprintf(tu_context, sizeof tu_context, "query seed %llu #%zu: %s max %zu",
             (unsigned long long)seed, i, text, max);
}

void tu_random_queries(const mh_reader *r, const mh_access *all, size_t n,
                       size_t count, uint64_t seed) {
    tu_rng rng = {seed};
    size_t nonempty = 0, plain = 0, bounded = 0, bounded_nonempty = 0;
    /* everything, both ways, with a cursor: every access comes back once */
    for (int dir = 0; dir < 2; dir++) {
        mh_query q;
        mh_query_init(&q);
        q.direction = (uint32_t)dir;
        q.start = dir == MH_FORWARD ? 0 : UINT64_MAX;
        q.ops = MH_OPS_ALL;
        q.addr_last = UINT64_MAX;
        describe(&q, n, (size_t)-1, seed);
        /* large pieces: this is about every access coming back, not about
         * resuming (the random queries below do that) */
        tu_check_cursor_pieces(r, all, n, &q, n + 1, 8192, &rng);
    }
    for (size_t i = 0; i < count; i++) {
        mh_query q;
        size_t max;
        tu_random_query(&rng, all, n, &q, &max);
        describe(&q, max, i, seed);
        uint64_t what = tu_below(&rng, 10);
        if (what < 6) {
            plain++;
            size_t k = tu_check_query(r, all, n, &q, max);
            nonempty += k > 0;
            bounded += q.end_kind != MH_END_NONE;
            bounded_nonempty += q.end_kind != MH_END_NONE && k > 0;
        }
        else if (what < 8)
            tu_check_chain(r, all, n, &q, 2 + (int)tu_below(&rng, 9), &rng);
        else
            tu_check_cursor(r, all, n, &q, 1 + (size_t)tu_below(&rng, 3000), &rng);
    }
    tu_context[0] = 0;
    /* the generator aims most queries at data: an oracle that matches
     * nothing would prove nothing */
    printf("  %zu random queries agree (%zu of %zu plain runs with matches; "
           "%zu of %zu with an end bound)\n", count, nonempty, plain, bounded_nonempty,
           bounded);
    CHECKF(n == 0 || plain < 50 || nonempty > plain / 8,
           "only %zu of %zu queries matched anything", nonempty, plain);
    CHECKF(n == 0 || bounded < 50 || bounded_nonempty > bounded / 20,
           "only %zu of %zu queries with an end bound matched anything", bounded_nonempty,
           bounded);
}

/* ---- format 2.0 filters --------------------------------------------- */

void tu_random_filters(tu_rng *rng, const mh_access *all, size_t n,
                       const oracle_window *win, size_t nwin, mh_query *q,
                       uint32_t set[8]) {
    uint64_t k = tu_below(rng, 10);
    if (k >= 4) {
        uint32_t ns = k < 7 ? 1 : 1 + (uint32_t)tu_below(rng, 4);
        for (uint32_t i = 0; i < ns; i++) {
            uint64_t u = tu_below(rng, 12);
            uint32_t some = n ? all[tu_below(rng, n)].stream : 0;
            set[i] = u < 8    ? some               /* one with accesses */
                     : u == 8 ? 3u                 /* likely never declared */
                     : u == 9 ? some + 32 * (1 + (uint32_t)tu_below(rng, 3)) /* aliases */
                     : u == 10 ? 70000u            /* above MH_STREAM_MAX */
                               : 0u;
        }
        q->streams = set;
        q->nstreams = ns;
    }
    if (tu_below(rng, 3) == 0) {
        q->filter |= MH_FILTER_PC;
        uint64_t c = n ? all[tu_below(rng, n)].pc : tu_next(rng);
        uint64_t w = tu_below(rng, 4) == 0 ? tu_below(rng, 1u << 16) : tu_below(rng, 3);
        q->pc_first = c - (c >= w ? tu_below(rng, w + 1) : c);
        q->pc_last = q->pc_first + (UINT64_MAX - q->pc_first > w ? w : UINT64_MAX - q->pc_first);
        if (tu_below(rng, 10) == 0) {
            q->pc_first = 0;
            q->pc_last = UINT64_MAX;
        }
    }
    if (nwin && tu_below(rng, 3) == 0) {
        q->filter |= MH_FILTER_WINDOW;
        q->window = tu_below(rng, 10) == 0 ? win[nwin - 1].window + 1
                                           : win[tu_below(rng, nwin)].window;
    }
}

static void describe_oq(const oracle_query *oq, size_t max, size_t i, uint64_t seed) {
    char text[400];
    oracle_format_query(text, sizeof text, oq);
    snprintf(tu_context, sizeof tu_context, "query seed %llu #%zu: %s max %zu",
             (unsigned long long)seed, i, text, max);
}

size_t tu_random_filtered_queries(const mh_reader *r, const mh_access *all, size_t n_all,
                                  const oracle_window *win, size_t nwin, size_t count,
                                  uint64_t seed) {
    tu_rng rng = {seed};
    mh_access *got = malloc(1000 * sizeof *got), *want = malloc(1000 * sizeof *want);
    mh_access *big = malloc((n_all ? n_all : 1) * sizeof *big);
    CHECK(got && want && big);
    size_t notfound = 0, filtered_hits = 0;
    for (size_t i = 0; i < count; i++) {
        mh_query q;
        size_t max;
        uint32_t set[8];
        tu_random_query(&rng, all, n_all, &q, &max);
        tu_random_filters(&rng, all, n_all, win, nwin, &q, set);
        oracle_query oq;
        int orc = oracle_query_from(&oq, &q, win, nwin);
        describe_oq(&oq, max, i, seed);
        size_t n = 0, wn = 0;
        int rc = mh_query_run(r, &q, got, max, &n);
        if (orc != MH_OK) {
            CHECK_RC(rc, orc);
            notfound++;
            continue;
        }
        CHECK_OK(rc);
        CHECK_OK(oracle_run(all, n_all, &oq, want, max, &wn));
        CHECK(oracle_compare("query", got, n, want, wn) == 0);
        if ((q.streams || q.filter) && n)
            filtered_hits++;
        switch (i % 3) {
        case 0: { /* a resume chain of up to 4 more pages */
            mh_query c = q;
            for (int page = 0; page < 4 && n == max; page++) {
                oracle_resume(&c, &got[n - 1]);
                oq.q = c;
                CHECK_OK(mh_query_run(r, &c, got, max, &n));
                CHECK_OK(oracle_run(all, n_all, &oq, want, max, &wn));
                CHECK(oracle_compare("resumed", got, n, want, wn) == 0);
            }
            break;
        }
        case 1: { /* a cursor to the end (or 20000 matches) in random pieces */
            size_t limit = 20000, total = 0;
            oq.q = q;
            CHECK_OK(oracle_run(all, n_all, &oq, big, limit, &wn));
            mh_cursor *cur = NULL;
            CHECK_OK(mh_cursor_open(r, &q, &cur));
            while (total < limit) {
                size_t piece = 1 + (size_t)tu_below(&rng, tu_below(&rng, 4) ? 50 : 999);
                if (piece > limit - total)
                    piece = limit - total;
                CHECK_OK(mh_cursor_next(cur, got, piece, &n));
                CHECK(total + n <= wn);
                CHECK(oracle_compare("cursor", got, n, big + total, n) == 0);
                total += n;
                if (n < piece)
                    break;
            }
            CHECKF(total == wn, "cursor gave %zu, want %zu", total, wn);
            mh_cursor_close(cur);
            break;
        }
        default:
            break;
        }
    }
    tu_context[0] = '\0';
    (void)notfound;
    free(got);
    free(want);
    free(big);
    return filtered_hits;
}

static void on_problem(void *ctx, const mh_problem *p) {
    tu_problems *x = ctx;
    if (x->n++ == 0) {
        x->code = p->code;
        snprintf(x->msg, sizeof x->msg, "%s", p->message);
    }
}

tu_problems tu_fsck(const char *dir) {
    tu_problems x = {0, 0, ""};
    mh_verify_result res = {.struct_size = sizeof res};
    mh_verify(dir, 0, on_problem, &x, &res);
    CHECK(res.problems == (uint64_t)x.n);
    return x;
}

void tu_write_store(const char *dir, const mh_writer_options *o, mh_access *all, size_t n) {
    mh_writer *w = NULL;
    CHECK_OK(mh_writer_open(dir, MH_CREATE, o, &w));
    CHECK_OK(mh_writer_append_batch(w, all, n, NULL));
    CHECK_OK(mh_writer_close(w));
    for (size_t i = 0; i < n; i++)
        all[i].id = i;
}

mh_access *tu_read_all(const mh_reader *r, size_t *n) {
    mh_stats st = {.struct_size = sizeof st};
    CHECK_OK(mh_reader_stats(r, &st));
    mh_access *all = malloc((st.accesses ? st.accesses : 1) * sizeof *all);
    CHECK(all != NULL);
    mh_query q;
    mh_query_init(&q);
    CHECK_OK(mh_query_run(r, &q, all, st.accesses, n));
    CHECK(*n == st.accesses);
    return all;
}

int tu_record_sort(const char *memhist, const char *dir, int lines, uint64_t mul,
                   uint64_t mod, char *rec, size_t cap, const char *who) {
    if (access("/usr/bin/qemu-x86_64", X_OK) != 0 &&
        system("command -v qemu-x86_64 >/dev/null 2>&1") != 0) {
        printf("%s: qemu-x86_64 not found: skipped\n", who);
        return TU_SKIP;
    }
    char in[4096], prog[4200];
    tu_join(in, sizeof in, dir, "in.txt");
    FILE *f = fopen(in, "w");
    CHECK(f != NULL);
    for (int i = 1; i <= lines; i++)
        fprintf(f, "%llu row %d\n", (unsigned long long)((uint64_t)i * mul % mod), i);
    CHECK(fclose(f) == 0);
    snprintf(prog, sizeof prog, "/usr/bin/sort '%s'", in);
    return tu_record_qemu(memhist, dir, prog, 1, rec, cap, who);
}

int tu_record_qemu(const char *memhist, const char *dir, const char *prog, int clean_env,
                   char *rec, size_t cap, const char *who) {
    if (access("/usr/bin/qemu-x86_64", X_OK) != 0 &&
        system("command -v qemu-x86_64 >/dev/null 2>&1") != 0) {
        printf("%s: qemu-x86_64 not found: skipped\n", who);
        return TU_SKIP;
    }
    char err[4096], cmd[16384];
    tu_join(err, sizeof err, dir, "err");
    tu_join(rec, cap, dir, "rec.mh");
    snprintf(cmd, sizeof cmd, "%s'%s' record --engine qemu --quiet -o '%s' -- %s >/dev/null 2>'%s'",
             clean_env ? "env -i LC_ALL=C " : "", memhist, rec, prog, err);
    int rc = system(cmd);
    if (rc == 0)
        return 0;
    size_t len = 0;
    unsigned char *e = tu_read_file(err, &len);
    printf("%s: memhist record failed (%d): %.*s\n", who, rc, (int)len,
           e ? (const char *)e : "");
    /* an engine that cannot run here (no qemu user mode) is a skip */
    int skip = e && memmem(e, len, "qemu", 4) != NULL;
    free(e);
    return skip ? TU_SKIP : 1;
}

int tu_record_threads(const char *memhist, const char *victim, const char *tag, char *dir,
                      size_t cap, mh_reader **r, mh_access **all, size_t *n, uint32_t *ns) {
    char rec[4096], prog[4200];
    tu_mkdtemp(dir, cap, tag);
    snprintf(prog, sizeof prog, "'%s' threads 8", victim);
    int rc = tu_record_qemu(memhist, dir, prog, 0, rec, sizeof rec, tag);
    if (rc != 0) {
        tu_rmtree(dir);
        return rc;
    }
    snprintf(tu_context, sizeof tu_context, "qemu recording of 8 threads");
    CHECK_OK(mh_reader_open(rec, r));
    *all = tu_read_all(*r, n);
    *ns = 0;
    for (size_t i = 0; i < *n; i++)
        *ns = (*all)[i].stream + 1 > *ns ? (*all)[i].stream + 1 : *ns;
    return 0;
}

void tu_flip_section_byte(const char *dir, const char *name, uint32_t type) {
    char path[4096];
    tu_join(path, sizeof path, dir, name);
    size_t len;
    unsigned char *b = tu_read_file(path, &len);
    CHECK(b);
    uint64_t off, size;
    uint32_t cnt;
    CHECKF(mhf_seg_find(b, len, type, &off, &size, &cnt) && size > 0,
           "%s has no section type %u", path, type);
    b[off + size - 1] ^= 0x40;
    tu_write_file(path, b, len);
    free(b);
}

void tu_same_file(const char *d1, const char *d2, const char *name) {
    char p1[4096], p2[4096];
    tu_join(p1, sizeof p1, d1, name);
    tu_join(p2, sizeof p2, d2, name);
    size_t n1 = 0, n2 = 0;
    unsigned char *b1 = tu_read_file(p1, &n1), *b2 = tu_read_file(p2, &n2);
    CHECKF(b1 && b2, "cannot read %s or %s", p1, p2);
    size_t at = 0;
    while (at < n1 && at < n2 && b1[at] == b2[at])
        at++;
    CHECKF(n1 == n2 && at == n1, "%s: %zu and %zu bytes, first difference at %zu",
           name, n1, n2, at);
    free(b1);
    free(b2);
}

mh_access *tu_record_sort_all(const char *memhist, const char *dir, int lines, char *rec,
                              size_t cap, const char *who, size_t *n, int *rc) {
    *n = 0;
    *rc = tu_record_sort(memhist, dir, lines, 7919, 100003, rec, cap, who);
    if (*rc != 0)
        return NULL;
    mh_reader *r = NULL;
    CHECK_OK(mh_reader_open(rec, &r));
    mh_access *all = tu_read_all(r, n);
    mh_reader_close(r);
    return all;
}
