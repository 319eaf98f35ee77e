/*
 * bench_report.c - the benchmark's table (markdown, for the terminal and the
 * README) and its JSON twin, plus the machine description printed with it.
 */
#include "bench.h"

#include <inttypes.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

void mhb_machine_get(mhb_machine *m)
{
    memset(m, 0, sizeof *m);
    m->nproc = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *p = strchr(line, ':');
                if (p) {
                    p++;
                    while (*p == ' ' || *p == '\t')
                        p++;
                    p[strcspn(p, "\n")] = 0;
                    snprintf(m->cpu, sizeof m->cpu, "%s", p);
                }
                break;
            }
        }
        fclose(f);
    }
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof m->kernel, "%s %s %s", u.sysname, u.release,
                 u.machine);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%d %H:%M UTC", &tm);
}

/* "12.3 M", "850 k", or "-" for a figure that was not measured. */
static const char *rate(char *buf, size_t len, double v)
{
    if (v < 0)
        snprintf(buf, len, "-");
    else if (v >= 1e6)
        snprintf(buf, len, "%.2f M", v / 1e6);
    else
        snprintf(buf, len, "%.1f k", v / 1e3);
    return buf;
}

static const char *num(char *buf, size_t len, double v, int prec)
{
    if (v < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", prec, v);
    return buf;
}

static const char *ratio(char *buf, size_t len, double a, double b)
{
    if (a <= 0 || b <= 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1fx", a / b);
    return buf;
}

/* Latencies keep three significant figures whatever their magnitude. */
static const char *us(char *buf, size_t len, double v)
{
    if (v >= 100)
        snprintf(buf, len, "%.0f", v);
    else if (v >= 10)
        snprintf(buf, len, "%.1f", v);
    else
        snprintf(buf, len, "%.2f", v);
    return buf;
}

/* One class's cells, from its latencies by slot (lat, has: the second
 * asks or the first ones): "p50 / p99[ / max]" per slot, and the ratios
 * p50 and p99 of each SQLite store to memhist. */
typedef struct lat_cells {
    char l[MHB_SLOTS][64], r[MHB_SLOTS - 1][2][16];
} lat_cells;

static void cells(lat_cells *o, const mhb_lat *lat, const int *has, int with_max)
{
    for (int sl = 0; sl < MHB_SLOTS; sl++) {
        char a[16], b[16], d[16];
        if (!has[sl])
            snprintf(o->l[sl], sizeof o->l[sl], "-");
        else if (with_max)
            snprintf(o->l[sl], sizeof o->l[sl], "%s / %s / %s", us(a, sizeof a, lat[sl].p50),
                     us(b, sizeof b, lat[sl].p99), us(d, sizeof d, lat[sl].max));
        else
            snprintf(o->l[sl], sizeof o->l[sl], "%s / %s", us(a, sizeof a, lat[sl].p50),
                     us(b, sizeof b, lat[sl].p99));
    }
    for (int sl = 1; sl < MHB_SLOTS; sl++) {
        int both = has[0] && has[sl];
        ratio(o->r[sl - 1][0], 16, both ? lat[sl].p50 : -1, lat[0].p50);
        ratio(o->r[sl - 1][1], 16, both ? lat[sl].p99 : -1, lat[0].p99);
    }
}

/* One line under a latency table: the major page faults of its pass
 * (first asks or the timed one), per implementation, summed over the
 * classes that measured them. */
static void fault_line(FILE *f, const mhb_workload *x, int first)
{
    static const char *const who[MHB_SLOTS] = {"memhist", "SQLite", "SQLite design"};
    fprintf(f, "Major page faults in this pass (pages read from disk: a warm pass "
               "should have none; stores held in the page cache: %s):",
            x->pinned == 1 ? "yes, mlock" : x->pinned == 2 ? "yes, mapped and read"
                                                           : "no (--no-pin, or refused)");
    for (int m = 0; m < MHB_SLOTS; m++) {
        long sum = 0, most = -1;
        size_t at = 0, classes = 0;
        for (size_t i = 0; i < x->ncls; i++) {
            long v = first ? x->cls[i].majflt_first[m] : x->cls[i].majflt[m];
            if (v < 0)
                continue;
            classes++;
            sum += v;
            if (v > most) {
                most = v;
                at = i;
            }
        }
        if (classes)
            fprintf(f, " %s %ld (most %ld, %s);", who[m], sum, most, x->cls[at].name);
    }
    fprintf(f, "\n\n");
}

static void lat_cell(char *buf, size_t len, const mhb_class *c, int slot)
{
    lat_cells o;
    cells(&o, c->lat, c->has_lat, 1);
    snprintf(buf, len, "%s", o.l[slot]);
}

void mhb_report_markdown(FILE *f, const mhb_machine *m, const mhb_workload *w,
                         size_t nw)
{
    fprintf(f, "Machine: %ld cores, %s, %s; %s.\n\n", m->nproc, m->cpu, m->kernel,
            m->date);
    for (size_t k = 0; k < nw; k++) {
        const mhb_workload *x = &w[k];
        char a[64], b[64], c[64], d[64], e[64];
        fprintf(f, "### %s: %" PRIu64 " accesses, %s query distribution\n\n", x->name,
                x->accesses, x->dist == MHB_DIST_USER ? "user" : "near");
        fprintf(f, "memhist: %" PRIu64 " slices, %" PRIu64 " chunks, %" PRIu64
                   " blocks. SQLite: ",
                x->mh_slices, x->mh_chunks, x->mh_blocks);
        if (x->sqlite_ran)
            fprintf(f, "%" PRIu64 " slices, %" PRIu64 " chunks; SQLite design: %" PRIu64
                       " slices, %" PRIu64 " chunks.",
                    x->sql_slices[MHB_SQL], x->sql_chunks[MHB_SQL],
                    x->sql_slices[MHB_SQLD], x->sql_chunks[MHB_SQLD]);
        else
            fprintf(f, "not run (above --sqlite-max).");
        fprintf(f, " Answers compared: %" PRIu64 ", mismatches: %" PRIu64 ".\n\n",
                x->compared, x->mismatches);
        fprintf(f, "| figure | memhist | SQLite | SQLite design | ratio to SQLite / "
                   "design |\n|---|---:|---:|---:|---:|\n");
        fprintf(f, "| ingest accesses/s, background threads on | %s | %s | %s | %s / %s |\n",
                rate(a, sizeof a, x->ingest_rate[0]), rate(b, sizeof b, x->ingest_rate[2]),
                rate(e, sizeof e, x->ingest_rate[3]),
                ratio(c, sizeof c, x->ingest_rate[0], x->ingest_rate[2]),
                ratio(d, sizeof d, x->ingest_rate[0], x->ingest_rate[3]));
        fprintf(f, "| ingest accesses/s, background threads off | %s | | | %s / %s |\n",
                rate(a, sizeof a, x->ingest_rate[1]),
                ratio(c, sizeof c, x->ingest_rate[1], x->ingest_rate[2]),
                ratio(d, sizeof d, x->ingest_rate[1], x->ingest_rate[3]));
        const double *bp = x->bytes_per_access;
        fprintf(f, "| on-disk bytes per access | %s | %s | %s | %s / %s smaller |\n",
                num(a, sizeof a, bp[0], 2), num(b, sizeof b, bp[1], 2),
                num(e, sizeof e, bp[2], 2), ratio(c, sizeof c, bp[1], bp[0]),
                ratio(d, sizeof d, bp[2], bp[0]));
        const double *om = x->open_ms;
        fprintf(f, "| open time (warm), ms | %s | %s | %s | %s / %s |\n",
                num(a, sizeof a, om[0], 3), num(b, sizeof b, om[1], 3),
                num(e, sizeof e, om[2], 3), ratio(c, sizeof c, om[1], om[0]),
                ratio(d, sizeof d, om[2], om[0]));
        double co[MHB_SLOTS];
        for (int i = 0; i < MHB_SLOTS; i++)
            co[i] = x->cold[i].done ? x->cold[i].open_ms : -1;
        fprintf(f, "| open time (cold), ms | %s | %s | %s | %s / %s |\n",
                num(a, sizeof a, co[0], 2), num(b, sizeof b, co[1], 2),
                num(e, sizeof e, co[2], 2), ratio(c, sizeof c, co[1], co[0]),
                ratio(d, sizeof d, co[2], co[0]));
        for (int p = 0; p < 2; p++) {
            double v[MHB_SLOTS];
            for (int i = 0; i < MHB_SLOTS; i++)
                v[i] = !x->cold[i].done ? -1 : p ? x->cold[i].lat.p99 : x->cold[i].lat.p50;
            fprintf(f, "| cold first %u queries, %s us | %s | %s | %s | %s / %s |\n",
                    MHB_COLD_QUERIES, p ? "p99" : "p50", num(a, sizeof a, v[0], 1),
                    num(b, sizeof b, v[1], 1), num(e, sizeof e, v[2], 1),
                    ratio(c, sizeof c, v[1], v[0]), ratio(d, sizeof d, v[2], v[0]));
        }
        for (int p = 0; p < 2; p++) {
            double v[MHB_SLOTS];
            for (int i = 0; i < MHB_SLOTS; i++)
                v[i] = !x->cold[i].done ? -1 : p ? x->cold[i].question.max : x->cold[i].question.p50;
            fprintf(f, "| cold question (pages dropped, open + 1 query, %u of them), %s us "
                       "| %s | %s | %s | %s / %s |\n",
                    MHB_COLD_QUESTIONS, p ? "max" : "p50", num(a, sizeof a, v[0], 1),
                    num(b, sizeof b, v[1], 1), num(e, sizeof e, v[2], 1),
                    ratio(c, sizeof c, v[1], v[0]), ratio(d, sizeof d, v[2], v[0]));
        }
        for (int p = 0; p < 2; p++) {
            double v[MHB_SLOTS];
            for (int i = 0; i < MHB_SLOTS; i++)
                v[i] = !x->cold[i].done ? -1
                       : p              ? x->cold[i].question_pages.max
                                        : x->cold[i].question_pages.p50;
            fprintf(f, "| cold question, store pages read (4 KiB, readahead included), %s "
                       "| %s | %s | %s | %s / %s |\n",
                    p ? "max" : "p50", num(a, sizeof a, v[0], 0), num(b, sizeof b, v[1], 0),
                    num(e, sizeof e, v[2], 0), ratio(c, sizeof c, v[1], v[0]),
                    ratio(d, sizeof d, v[2], v[0]));
        }
        if (x->cold[0].done && x->cold[0].has_kinds) {
            /* where memhist's cold questions read, the largest first */
            unsigned ord[MHB_KINDS];
            for (unsigned u = 0; u < MHB_KINDS; u++)
                ord[u] = u;
            for (unsigned u = 1; u < MHB_KINDS; u++)
                for (unsigned j = u; j > 0 && x->cold[0].question_kinds[ord[j]] >
                                                  x->cold[0].question_kinds[ord[j - 1]];
                     j--) {
                    unsigned t = ord[j];
                    ord[j] = ord[j - 1];
                    ord[j - 1] = t;
                }
            fprintf(f, "| cold question, store pages read by section, mean of %u |",
                    MHB_COLD_QUESTIONS);
            int any = 0;
            for (unsigned u = 0; u < MHB_KINDS; u++) {
                double v = x->cold[0].question_kinds[ord[u]];
                if (v < 0.05)
                    continue;
                fprintf(f, "%s %s %.1f", any ? "," : "", mhb_kind_name(ord[u]), v);
                any = 1;
            }
            fprintf(f, "%s | | | |\n", any ? "" : " none");
        }
        fprintf(f, "| store pages still cached after the drop, %% | %s | %s | %s | |\n",
                num(a, sizeof a, x->cold[0].done ? x->cold[0].resident_pct : -1, 1),
                num(b, sizeof b, x->cold[1].done ? x->cold[1].resident_pct : -1, 1),
                num(e, sizeof e, x->cold[2].done ? x->cold[2].resident_pct : -1, 1));
        fprintf(f, "| writer peak RSS MiB, background threads on | %s | %s | %s | |\n",
                num(a, sizeof a, x->writer_mib[0], 1), num(b, sizeof b, x->writer_mib[2], 1),
                num(e, sizeof e, x->writer_mib[3], 1));
        fprintf(f, "| writer peak RSS MiB, background threads off | %s | | | |\n",
                num(a, sizeof a, x->writer_mib[1], 1));
        fprintf(f, "| reader peak RSS MiB | %s | %s | %s | |\n",
                num(a, sizeof a, x->reader_mib[0], 1), num(b, sizeof b, x->reader_mib[1], 1),
                num(e, sizeof e, x->reader_mib[2], 1));
        fprintf(f, "| reader cache option (mh_reader_set_cache, --cache), MiB | %s | | | |\n",
                num(a, sizeof a, (double)x->reader_cache / 1048576.0, 1));
        fprintf(f, "| reader RSS MiB at the end, anonymous (each query context's decoded blocks, and what the segments remember: each bounded by the cache option) | %s | %s | %s | |\n",
                num(a, sizeof a, x->reader_anon_mib[0], 1), num(b, sizeof b, x->reader_anon_mib[1], 1),
                num(e, sizeof e, x->reader_anon_mib[2], 1));
        fprintf(f, "| reader RSS MiB at the end, file-backed (mapped store pages; reclaimable) | %s | %s | %s | |\n",
                num(a, sizeof a, x->reader_file_mib[0], 1), num(b, sizeof b, x->reader_file_mib[1], 1),
                num(e, sizeof e, x->reader_file_mib[2], 1));
        /* format 2.0: streams, pc column, address summary, producers */
        fprintf(f, "| streams / accesses with a pc / segments | %u / %" PRIu64 " / %u | | | |\n",
                x->nstreams, x->with_pc, x->segments);
        if (x->bytes_nopc >= 0)
            fprintf(f, "| bytes per access without the pc column (pc costs) | %s (+%s) | | | |\n",
                    num(a, sizeof a, x->bytes_nopc, 3),
                    num(b, sizeof b, bp[0] - x->bytes_nopc, 3));
        double per = 1.0 / (double)(x->accesses ? x->accesses : 1);
        fprintf(f, "| address summary bytes per access (in the figure above) | %s | | | |\n",
                num(a, sizeof a, (double)x->summary_bytes * per, 4));
        fprintf(f, "| index bytes per access (in the figure above) | records %.3f, fine summary "
                   "%.3f, id map %.3f, address set %.3f, postings %.3f | | | |\n",
                (double)x->records_bytes * per, (double)x->fine_bytes * per,
                (double)x->idmap_bytes * per, (double)x->aset_bytes * per,
                (double)x->apost_bytes * per);
        if (x->producer_rate >= 0) {
            fprintf(f, "| ingest accesses/s through %u producers on %u threads | %s | | | |\n",
                    x->nstreams, x->producer_threads, rate(a, sizeof a, x->producer_rate));
            fprintf(f, "| writer peak RSS MiB, producers | %s | | | |\n",
                    num(a, sizeof a, x->producer_mib, 1));
            fprintf(f, "| producers' store = batch store | %s | | | |\n",
                    x->producer_same == 1 ? "yes" : x->producer_same == 0 ? "**no**" : "error");
        }
        fprintf(f, "\nTimed: %u pass%s of each class after its warm pass, %s; "
                   "p50 / p99 / max of passes x queries asks.\n",
                x->timed_passes, x->timed_passes == 1 ? "" : "es",
                x->turns_impl ? "each implementation's back to back after an untimed "
                                "pass of its own (--turns impl)"
                              : "the implementations taking turns");
        fprintf(f, "\n| query class (latency us p50 / p99 / max) | queries | results | memhist | "
                   "SQLite | SQLite design | ratio p50 / p99 to SQLite | to design |\n"
                   "|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < x->ncls; i++) {
            const mhb_class *q = &x->cls[i];
            lat_cells o;
            cells(&o, q->lat, q->has_lat, 1);
            fprintf(f, "| %s | %zu | %.1f | %s | %s | %s | %s / %s | %s / %s |\n", q->name,
                    q->nrun, q->mean_results, o.l[0], o.l[1], o.l[2], o.r[0][0], o.r[0][1],
                    o.r[1][0], o.r[1][1]);
        }
        fprintf(f, "\n");
        if (x->ncls)
            fault_line(f, x, 0);
        /* the same queries at their first ask: the warm pass, before the
         * timed one asked them again */
        int firsts = 0;
        for (size_t i = 0; i < x->ncls; i++) {
            const mhb_class *q = &x->cls[i];
            if (!q->has_first[MHB_MH])
                continue;
            if (!firsts++)
                fprintf(f, "| query class, first ask (us p50 / p99: each query's first "
                           "run, the page cache warm; the table above asks them again) "
                           "| memhist | SQLite | SQLite design | ratio p50 / p99 to SQLite "
                           "| to design |\n|---|---:|---:|---:|---:|---:|\n");
            lat_cells o;
            cells(&o, q->first, q->has_first, 0);
            fprintf(f, "| %s | %s | %s | %s | %s / %s | %s / %s |\n", q->name, o.l[0], o.l[1],
                    o.l[2], o.r[0][0], o.r[0][1], o.r[1][0], o.r[1][1]);
        }
        if (firsts) {
            fprintf(f, "\n");
            fault_line(f, x, 1);
        }
        /* issue 9: a query filtered to one stream is never slower than the
         * same query unfiltered */
        int twins = 0;
        for (size_t i = 0; i < x->ncls; i++) {
            const mhb_class *q = &x->cls[i];
            if (q->sid == NULL)
                continue;
            const mhb_class *u = &x->cls[q->base];
            if (!twins++)
                fprintf(f, "| one stream against unfiltered (memhist, us) | results | "
                           "p50 / p99 one stream | p50 / p99 unfiltered | ratio p50 / p99 |\n"
                           "|---|---:|---:|---:|---:|\n");
            char l1[64], l2[64], r1[16], r2[16];
            lat_cell(l1, sizeof l1, q, MHB_MH);
            lat_cell(l2, sizeof l2, u, MHB_MH);
            /* two decimals: "never slower" is judged near 1.0x */
            if (q->has_lat[MHB_MH] && u->has_lat[MHB_MH] && u->lat[MHB_MH].p50 > 0 &&
                u->lat[MHB_MH].p99 > 0) {
                snprintf(r1, sizeof r1, "%.2fx", q->lat[MHB_MH].p50 / u->lat[MHB_MH].p50);
                snprintf(r2, sizeof r2, "%.2fx", q->lat[MHB_MH].p99 / u->lat[MHB_MH].p99);
            } else {
                snprintf(r1, sizeof r1, "-");
                snprintf(r2, sizeof r2, "-");
            }
            fprintf(f, "| %s | %.1f | %s | %s | %s / %s |\n", q->name, q->mean_results, l1,
                    l2, r1, r2);
        }
        if (twins)
            fprintf(f, "\n");
    }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* null for "not measured" */
static void json_num(FILE *f, double v)
{
    if (v < 0)
        fprintf(f, "null");
    else
        fprintf(f, "%.6g", v);
}

/* a class's latencies (null when not measured) */
static void json_lat(FILE *f, const mhb_lat *l, int has)
{
    if (!has) {
        fprintf(f, "null");
        return;
    }
    fprintf(f, "{\"p50_us\": %.3f, \"p99_us\": %.3f, \"max_us\": %.3f, \"asks\": %zu",
            l->p50, l->p99, l->max, l->count);
    if (l->p99_rest >= 0)
        fprintf(f, ", \"p99_rest_us\": %.3f", l->p99_rest);
    if (l->minflt >= 0)
        fprintf(f, ", \"minor_faults\": %ld, \"asks_with_faults\": %ld", l->minflt,
                l->fault_asks);
    if (l->p99_calm >= 0)
        fprintf(f, ", \"p99_calm_us\": %.3f", l->p99_calm);
    fprintf(f, "}");
}

static const char *const json_key[MHB_SLOTS] = {"memhist", "sqlite", "sqlite_design"};

/* "key": {"memhist": v, "sqlite": v, "sqlite_design": v}, */
static void json_slots(FILE *f, const char *key, const double *v)
{
    fprintf(f, "     \"%s\": {", key);
    for (int i = 0; i < MHB_SLOTS; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", json_key[i]);
        json_num(f, v[i]);
    }
    fprintf(f, "},\n");
}

int mhb_report_json(const char *path, const mhb_machine *m,
                    const mhb_workload *w, size_t nw)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return MH_EIO;
    fprintf(f, "{\n  \"machine\": {\"nproc\": %ld, \"cpu\": ", m->nproc);
    json_str(f, m->cpu);
    fprintf(f, ", \"kernel\": ");
    json_str(f, m->kernel);
    fprintf(f, ", \"date\": ");
    json_str(f, m->date);
    fprintf(f, "},\n  \"workloads\": [\n");
    for (size_t k = 0; k < nw; k++) {
        const mhb_workload *x = &w[k];
        fprintf(f, "    {\"name\": ");
        json_str(f, x->name);
        fprintf(f, ", \"accesses\": %" PRIu64 ", \"sqlite_ran\": %s,\n", x->accesses,
                x->sqlite_ran ? "true" : "false");
        fprintf(f, "     \"answers_compared\": %" PRIu64 ", \"mismatches\": %" PRIu64 ",\n",
                x->compared, x->mismatches);
        fprintf(f, "     \"dist\": \"%s\",\n", x->dist == MHB_DIST_USER ? "user" : "near");
        fprintf(f, "     \"timed_passes\": %u,\n", x->timed_passes);
        fprintf(f, "     \"turns\": \"%s\",\n", x->turns_impl ? "impl" : "pass");
        fprintf(f, "     \"reader_cache_bytes\": %" PRIu64 ",\n", x->reader_cache);
        fprintf(f, "     \"pinned\": %s,\n", x->pinned == 1 ? "\"mlock\""
                                           : x->pinned == 2 ? "\"mapped\"" : "false");
        static const char *const keys[4] = {"memhist_bg", "memhist_nobg", "sqlite",
                                            "sqlite_design"};
        fprintf(f, "     \"ingest_accesses_per_s\": {");
        for (int i = 0; i < 4; i++) {
            fprintf(f, "%s\"%s\": ", i ? ", " : "", keys[i]);
            json_num(f, x->ingest_rate[i]);
        }
        fprintf(f, "},\n     \"ingest_cpu_cores\": {\"memhist_bg\": ");
        json_num(f, x->ingest_cores[0]);
        fprintf(f, ", \"memhist_nobg\": ");
        json_num(f, x->ingest_cores[1]);
        fprintf(f, "},\n     \"writer_peak_rss_mib\": {");
        for (int i = 0; i < 4; i++) {
            fprintf(f, "%s\"%s\": ", i ? ", " : "", keys[i]);
            json_num(f, x->writer_mib[i]);
        }
        fprintf(f, "},\n");
        json_slots(f, "bytes_per_access", x->bytes_per_access);
        fprintf(f, "     \"streams\": %u, \"accesses_with_pc\": %" PRIu64
                   ", \"segments\": %u, \"summary_bytes\": %" PRIu64 ",\n",
                x->nstreams, x->with_pc, x->segments, x->summary_bytes);
        fprintf(f, "     \"records_bytes\": %" PRIu64 ", \"fine_summary_bytes\": %" PRIu64
                   ", \"idmap_bytes\": %" PRIu64 ", \"aset_bytes\": %" PRIu64
                   ", \"apost_bytes\": %" PRIu64 ",\n",
                x->records_bytes, x->fine_bytes, x->idmap_bytes, x->aset_bytes,
                x->apost_bytes);
        fprintf(f, "     \"bytes_per_access_without_pc\": ");
        json_num(f, x->bytes_nopc);
        fprintf(f, ", \"producer_threads\": %u, \"producer_accesses_per_s\": ",
                x->producer_threads);
        json_num(f, x->producer_rate);
        fprintf(f, ", \"producer_peak_rss_mib\": ");
        json_num(f, x->producer_mib);
        fprintf(f, ", \"producer_store_same\": %s,\n",
                x->producer_same == 1 ? "true" : x->producer_same == 0 ? "false" : "null");
        json_slots(f, "open_ms", x->open_ms);
        json_slots(f, "reader_peak_rss_mib", x->reader_mib);
        json_slots(f, "reader_rss_anon_mib", x->reader_anon_mib);
        json_slots(f, "reader_rss_file_mib", x->reader_file_mib);
        fprintf(f, "     \"store_bytes\": {\"memhist\": %" PRIu64 ", \"sqlite\": %" PRIu64
                   ", \"sqlite_design\": %" PRIu64 "},\n",
                x->store_bytes[0], x->store_bytes[1], x->store_bytes[2]);
        fprintf(f, "     \"cold\": {");
        for (int i = 0; i < MHB_SLOTS; i++) {
            const mhb_cold *cd = &x->cold[i];
            fprintf(f, "%s\"%s\": ", i ? ", " : "", json_key[i]);
            if (!cd->done)
                fprintf(f, "null");
            else
                fprintf(f, "{\"open_ms\": %.3f, \"p50_us\": %.3f, \"p99_us\": %.3f, "
                           "\"max_us\": %.3f, \"queries\": %zu, \"cached_pct\": %.2f, "
                           "\"question_p50_us\": %.3f, \"question_max_us\": %.3f, "
                           "\"question_pages_p50\": %.0f, \"question_pages_max\": %.0f, "
                           "\"questions\": %zu",
                        cd->open_ms, cd->lat.p50, cd->lat.p99, cd->lat.max, cd->lat.count,
                        cd->resident_pct, cd->question.p50, cd->question.max,
                        cd->question_pages.p50, cd->question_pages.max, cd->question.count);
            if (cd->done && cd->has_kinds) {
                fprintf(f, ", \"question_pages_by_section\": {");
                for (unsigned u = 0; u < MHB_KINDS; u++)
                    fprintf(f, "%s\"%s\": %.2f", u ? ", " : "", mhb_kind_name(u),
                            cd->question_kinds[u]);
                fprintf(f, "}");
            }
            if (cd->done)
                fprintf(f, "}");
        }
        fprintf(f, "},\n     \"memhist_layout\": {\"slices\": %" PRIu64 ", \"chunks\": %" PRIu64
                   ", \"blocks\": %" PRIu64 "},\n     \"sqlite_layout\": {\"slices\": %" PRIu64
                   ", \"chunks\": %" PRIu64 "},\n     \"sqlite_design_layout\": {\"slices\": %"
                   PRIu64 ", \"chunks\": %" PRIu64 "},\n     \"queries\": [\n",
                x->mh_slices, x->mh_chunks, x->mh_blocks, x->sql_slices[MHB_SQL],
                x->sql_chunks[MHB_SQL], x->sql_slices[MHB_SQLD], x->sql_chunks[MHB_SQLD]);
        for (size_t i = 0; i < x->ncls; i++) {
            const mhb_class *q = &x->cls[i];
            fprintf(f, "       {\"class\": ");
            json_str(f, q->name);
            fprintf(f, ", \"queries\": %zu, \"mean_results\": %.2f, \"memhist\": ",
                    q->nrun, q->mean_results);
            json_lat(f, &q->lat[0], q->has_lat[0]);
            fprintf(f, ", \"sqlite\": ");
            json_lat(f, &q->lat[1], q->has_lat[1]);
            fprintf(f, ", \"sqlite_design\": ");
            json_lat(f, &q->lat[2], q->has_lat[2]);
            fprintf(f, ", \"first_ask\": {\"memhist\": ");
            json_lat(f, &q->first[0], q->has_first[0]);
            fprintf(f, ", \"sqlite\": ");
            json_lat(f, &q->first[1], q->has_first[1]);
            fprintf(f, ", \"sqlite_design\": ");
            json_lat(f, &q->first[2], q->has_first[2]);
            fprintf(f, "}, \"memhist_blocks_decoded_per_ask\": ");
            json_num(f, q->mh_decoded_per_ask);
            fprintf(f, ", \"major_faults\": {");
            for (int j = 0; j < MHB_SLOTS; j++)
                fprintf(f, "%s\"%s\": [%ld, %ld]", j ? ", " : "", json_key[j],
                        q->majflt_first[j], q->majflt[j]);
            fprintf(f, "}, \"never\": %s, \"one_stream\": %s}%s\n",
                    q->never ? "true" : "false", q->sid ? "true" : "false",
                    i + 1 < x->ncls ? "," : "");
        }
        fprintf(f, "     ]}%s\n", k + 1 < nw ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return MH_EIO;
    return MH_OK;
}
