/*
 * engine_qemu_system.c - `memhist record --engine qemu-system`: records a
 * whole guest machine (kernel and user space) under qemu-system-x86_64 with
 * the memhist plugin in full-system mode (engine_qemu.h, qemu/README.md).
 *
 * The machine, and why:
 *   -accel tcg,thread=single   every vCPU on one host thread: the plugin's
 *                              instruction clock needs no atomics and the
 *                              rings' merge bound is the clock (ring.h)
 *   -icount shift=0,sleep=off  virtual time follows instructions, so the
 *                              kernel's timed spin loops do not depend on
 *                              emulation speed (a plugin slows it 10x)
 *   -m 512M                    RAM below the 4 GiB PCI hole: QEMU 7.2's
 *                              physical address of RAM mapped above 4 GiB
 *                              comes out wrong (QEMU-NOTES)
 *   -nodefaults -nic none      no option ROMs, VGA, disks: seconds of boot
 *   -no-reboot, panic=-1       a kernel panic ends qemu instead of looping
 *   ttyS0 = stdio              the program's input and output
 *   ttyS1 = a file             the program's exit status, written by /init
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_qemu.h"
#include "engine_qemu_initramfs.h"
#include "engine_qemu_int.h"

#define KERNEL_CACHE "/var/cache/memhist/vmlinuz"
#define MACHINE_DESC "-accel tcg,thread=single -icount shift=0,sleep=off -m 512M -smp 1"

static int readable(const char *p) { return p && access(p, R_OK) == 0; }

/* The newest (by mtime) readable /boot/vmlinuz-*, malloc'd, or NULL. */
static char *boot_kernel(void) {
    DIR *d = opendir("/boot");
    if (d == NULL)
        return NULL;
    char *best = NULL;
    time_t best_t = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "vmlinuz-", 8) != 0)
            continue;
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "/boot/%s", e->d_name);
        if (!readable(p) || stat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (best == NULL || st.st_mtime > best_t) {
            free(best);
            best = strdup(p);
            best_t = st.st_mtime;
        }
    }
    closedir(d);
    return best;
}

static char *find_kernel(const engine_opts *o) {
    if (o && o->kernel)
        return readable(o->kernel) ? strdup(o->kernel) : NULL;
    const char *env = getenv("MEMHIST_KERNEL");
    if (env && *env)
        return readable(env) ? strdup(env) : NULL;
    if (readable(KERNEL_CACHE))
        return strdup(KERNEL_CACHE);
    return boot_kernel();
}

static char *find_busybox(void) {
    const char *env = getenv("MEMHIST_BUSYBOX");
    return engine_find_in_path(env && *env ? env : "busybox");
}

/* Removes the files of the private directory, then it. */
static void remove_dir(const char *dir, const char *const names[], size_t n) {
    char p[PATH_MAX];
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* The exit status /init wrote to ttyS1: 0..255, or -1 when absent. */
static int read_status(const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[64] = "";
    int v = -1;
    if (fgets(line, sizeof line, f) != NULL) {
        char *end;
        long x = strtol(line, &end, 10);
        while (*end == '\r' || *end == '\n')
            end++;
        if (end != line && *end == '\0' && x >= 0 && x <= 255)
            v = (int)x;
    }
    fclose(f);
    return v;
}

/* The version string a bzImage carries (boot protocol >= 2.00: header
 * "HdrS" at 0x202, a u16 at 0x20e pointing to the string, minus 0x200),
 * e.g. "6.1.0-56-amd64 (debian-kernel@lists.debian.org) #1 SMP ...". */
static void kernel_version(const char *path, char *out, size_t len) {
    snprintf(out, len, "unknown");
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return;
    unsigned char hdr[0x210];
    char v[256];
    if (fread(hdr, 1, sizeof hdr, f) == sizeof hdr && memcmp(hdr + 0x202, "HdrS", 4) == 0) {
        unsigned off = (unsigned)(hdr[0x20e] | hdr[0x20f] << 8) + 0x200u;
        size_t n;
        if (off >= 0x200 && fseek(f, (long)off, SEEK_SET) == 0 &&
            (n = fread(v, 1, sizeof v - 1, f)) > 0) {
            v[n] = '\0';
            size_t k = 0;
            while (k < n && v[k] >= 0x20 && v[k] < 0x7f)
                k++;
            v[k] = '\0';
            if (k > 0)
                snprintf(out, len, "%s", v);
        }
    }
    fclose(f);
}

static int set_meta_u64(mh_writer *w, const char *key, uint64_t v) {
    char num[32];
    snprintf(num, sizeof num, "%" PRIu64, v);
    return mh_writer_set_meta(w, key, num);
}

int engine_qemu_system_run(char *const argv[], const engine_opts *o, mh_writer *w,
                           volatile sig_atomic_t *stop, engine_result *res) {
    if (mhq_begin(argv, w, "qemu-plugin-system", res))
        return ENGINE_EFAILED;
    const char *env = getenv("MEMHIST_QEMU_SYSTEM");
    const char *qname = o && o->tool ? o->tool : env && *env ? env : "qemu-system-x86_64";
    char *qemu = engine_find_in_path(qname), *plugin = NULL, *kernel = NULL, *busybox = NULL,
         *prog = NULL, *parg = NULL;
    char dir[] = "/tmp/memhist-guest-XXXXXX";
    int have_dir = 0, fd = -1, rc = ENGINE_EFAILED;
    mhq_header *h = NULL;
    consumer *c = NULL;
    char initrd[PATH_MAX], status_path[PATH_MAX], serial1[PATH_MAX + 16], append[256];
    static const char *const files[] = {"initramfs.cpio", "status"};

    if (o && o->exec) {
        mhq_set_error(res, "--exec is not supported with the qemu-system engine");
        goto out;
    }
    if (qemu == NULL) {
        mhq_set_error(res, "%s not found: install it with apt-get install qemu-system-x86", qname);
        goto out;
    }
    if ((plugin = mhq_find_plugin()) == NULL) {
        const char *penv = getenv("MEMHIST_QEMU_PLUGIN");
        if (penv && *penv)
            mhq_set_error(res, "MEMHIST_QEMU_PLUGIN='%s' is not readable", penv);
        else
            mhq_set_error(res, "the memhist QEMU plugin (libmemhist-qemu.so) was not built or installed");
        goto out;
    }
    if ((kernel = find_kernel(o)) == NULL) {
        mhq_set_error(res, "no guest kernel: give --kernel FILE or $MEMHIST_KERNEL, or run "
                           "tools/scripts/deps.sh (it extracts Debian's linux-image-amd64 into %s)",
                      KERNEL_CACHE);
        goto out;
    }
    if ((busybox = find_busybox()) == NULL || mhq_elf_static(busybox) != 1) {
        mhq_set_error(res, "a static busybox is needed for the guest: apt-get install busybox-static "
                           "(or set $MEMHIST_BUSYBOX)");
        goto out;
    }
    if ((prog = engine_find_in_path(argv[0])) == NULL) {
        mhq_set_error(res, "program '%s' not found or not executable", argv[0]);
        goto out;
    }
    int kind = mhq_elf_static(prog);
    if (kind < 0 || (kind == 0 && !(o && o->initrd))) {
        mhq_set_error(res, "'%s' is %s: the guest has only busybox, so the program must be a "
                           "statically linked x86-64 executable (or give --initrd with what it needs)",
                      argv[0], kind < 0 ? "not an x86-64 ELF executable" : "dynamically linked");
        goto out;
    }
    if (mkdtemp(dir) == NULL) {
        mhq_set_error(res, "temporary directory: %s", strerror(errno));
        goto out;
    }
    have_dir = 1;
    snprintf(initrd, sizeof initrd, "%s/%s", dir, files[0]);
    snprintf(status_path, sizeof status_path, "%s/%s", dir, files[1]);
    snprintf(serial1, sizeof serial1, "file:%s", status_path);
    char err[512];
    if (mhq_initramfs_write(initrd, busybox, prog, argv, o ? o->initrd : NULL, err, sizeof err)) {
        mhq_set_error(res, "%s", err);
        goto out;
    }
    mhq_qemu_version(qemu, res->tracer_version, sizeof res->tracer_version);
    if ((rc = mhq_rings_create(0, 1, &fd, &h, res)) != 0)
        goto out;
    rc = ENGINE_EFAILED;
    parg = mhq_plugin_arg(plugin, fd, h->total_size);
    c = calloc(1, sizeof *c);
    if (parg == NULL || c == NULL) {
        rc = MH_ENOMEM;
        mhq_set_error(res, "%s", mh_strerror(MH_ENOMEM));
        goto out;
    }
    snprintf(append, sizeof append, "console=ttyS0 loglevel=1 panic=-1 rdinit=/init");
    char *qargv[] = {qemu, "-nodefaults", "-no-user-config", "-machine", "pc",
                     "-accel", "tcg,thread=single", "-icount", "shift=0,sleep=off",
                     "-m", "512M", "-smp", "1", "-nic", "none", "-display", "none",
                     "-no-reboot", "-chardev", "stdio,id=con", "-serial", "chardev:con",
                     "-serial", serial1, "-kernel", kernel, "-initrd", initrd,
                     "-append", append, "-plugin", parg, NULL};
    mhq_consumer_init(c, h, w, o);

    pid_t pid = mhq_spawn(qemu, qargv, fd, res);
    if (pid < 0)
        goto out;
    int drc = mhq_consume(c, pid, stop, res);
    res->started = atomic_load(&h->attached) != 0;
    if ((drc = mhq_consume_failed(c, drc, res)) != 0) {
        rc = drc;
        goto out;
    }
    if (!res->started) {
        mhq_set_error(res, "%s did not load the plugin %s (its message is above)", qemu, plugin);
        goto out;
    }
    if (mhq_plugin_failed(h, res))
        goto out;
    if (!atomic_load(&h->triggered) && !res->interrupted) {
        mhq_set_error(res, "the guest never started '%s' (kernel %s did not boot to /init? "
                           "qemu exit status %d)", argv[0], kernel,
                      WIFEXITED(res->wait_status) ? WEXITSTATUS(res->wait_status) : -1);
        goto out;
    }
    /* The program's exit status as /init saw it. Without one (the guest
     * died, or was stopped) it is unknown: qemu's own status says nothing
     * about the program, and 0x7f is neither exited nor signalled. */
    int st = read_status(status_path);
    res->wait_status = st >= 0 ? st << 8 : 0x7f;
    if (st < 0 && !res->interrupted)
        mhq_warn_user(o, "the guest did not report '%s''s exit status (it did not reach the "
                         "end of /init)", argv[0]);
    uint64_t io = atomic_load(&h->io_skipped), unmapped = atomic_load(&h->unmapped);
    char kver[256];
    kernel_version(kernel, kver, sizeof kver);
    int mrc = mh_writer_set_meta(w, "qemu_system_kernel", kernel);
    if (mrc == 0)
        mrc = mh_writer_set_meta(w, "qemu_system_kernel_version", kver);
    if (mrc == 0)
        mrc = mh_writer_set_meta(w, "qemu_system_machine", MACHINE_DESC);
    if (mrc == 0)
        mrc = set_meta_u64(w, "qemu_io_accesses_skipped", io);
    if (mrc == 0)
        mrc = set_meta_u64(w, "qemu_unmapped_accesses", unmapped);
    if (mrc == 0)
        mrc = set_meta_u64(w, "qemu_instructions", atomic_load(&h->clock));
    rc = mhq_finish_meta(c, mrc, res);
out:
    mhq_rings_unmap(h, fd);
    if (have_dir)
        remove_dir(dir, files, sizeof files / sizeof files[0]);
    free(c);
    free(parg);
    free(prog);
    free(busybox);
    free(kernel);
    free(plugin);
    free(qemu);
    return rc;
}
