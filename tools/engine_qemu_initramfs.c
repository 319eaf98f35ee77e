/*
 * engine_qemu_initramfs.c - builds the guest's initramfs for
 * `memhist record --engine qemu-system` (engine_qemu_initramfs.h).
 *
 * The cpio "newc" format (what the kernel unpacks into its rootfs) is 110
 * bytes of ASCII header, the NUL-terminated name, padding to 4 bytes, the
 * data, padding to 4. Writing it here avoids a dependency on cpio and on
 * root (device nodes are just header fields).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_qemu_initramfs.h"

static void err_set(char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void err_set(char *err, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

int mhq_elf_static(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char eh[64];
    int kind = -1;
    if (pread(fd, eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh, "\177ELF", 4) != 0 ||
        eh[4] != 2 || eh[5] != 1 || le16(eh + 18) != 62 /* EM_X86_64 */)
        goto out;
    uint64_t phoff = le64(eh + 32);
    uint16_t phentsize = le16(eh + 54), phnum = le16(eh + 56);
    if (phentsize < 56 || phnum == 0 || phnum > 256)
        goto out;
    kind = 1;
    for (uint16_t i = 0; i < phnum; i++) {
        unsigned char ph[56];
        if (pread(fd, ph, sizeof ph, (off_t)(phoff + (uint64_t)i * phentsize)) != (ssize_t)sizeof ph) {
            kind = -1;
            break;
        }
        if (le32(ph) == 3 /* PT_INTERP */)
            kind = 0;
    }
out:
    close(fd);
    return kind;
}

typedef struct cpio {
    FILE *f;
    unsigned ino;
    char *err;
    size_t errlen;
} cpio;

static int pad4(cpio *c) {
    long pos = ftell(c->f);
    static const char zeros[4] = {0};
    if (pos < 0)
        return -1;
    size_t n = (size_t)((4 - pos % 4) % 4);
    return n && fwrite(zeros, 1, n, c->f) != n ? -1 : 0;
}

static int header(cpio *c, const char *name, unsigned mode, uint64_t size, unsigned rmaj,
                  unsigned rmin) {
    if (size > 0xffffffffu) {
        err_set(c->err, c->errlen, "'%s' is too large for an initramfs", name);
        return -1;
    }
    size_t nl = strlen(name) + 1;
    if (fprintf(c->f, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08zX%08X",
                ++c->ino, mode, 0u, 0u, 1u, 0u, (unsigned)size, 0u, 0u, rmaj, rmin, nl, 0u) < 0 ||
        fwrite(name, 1, nl, c->f) != nl || pad4(c)) {
        err_set(c->err, c->errlen, "writing the initramfs: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static int entry(cpio *c, const char *name, unsigned mode, const void *data, size_t len) {
    if (header(c, name, mode, len, 0, 0))
        return -1;
    if ((len && fwrite(data, 1, len, c->f) != len) || pad4(c)) {
        err_set(c->err, c->errlen, "writing the initramfs: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Copies host file src as name (mode 0755 regular file). */
static int entry_file(cpio *c, const char *name, const char *src) {
    FILE *in = fopen(src, "rb");
    struct stat st;
    if (in == NULL || fstat(fileno(in), &st) != 0) {
        err_set(c->err, c->errlen, "cannot read '%s': %s", src, strerror(errno));
        if (in)
            fclose(in);
        return -1;
    }
    int rc = header(c, name, 0100755, (uint64_t)st.st_size, 0, 0);
    char buf[65536];
    uint64_t left = (uint64_t)st.st_size;
    while (rc == 0 && left > 0) {
        size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
        size_t got = fread(buf, 1, want, in);
        if (got == 0 || fwrite(buf, 1, got, c->f) != got) {
            err_set(c->err, c->errlen, "copying '%s' into the initramfs failed", src);
            rc = -1;
        }
        left -= got;
    }
    fclose(in);
    if (rc == 0 && pad4(c)) {
        err_set(c->err, c->errlen, "writing the initramfs: %s", strerror(errno));
        rc = -1;
    }
    return rc;
}

/* A static x86-64 ELF of 137 bytes: one PT_LOAD at 0x400000 mapping the
 * file, code at offset 120: the 8-byte marker NOP, then exit(0). Built at
 * run time so the repository holds no binary. */
static size_t marker_elf(unsigned char out[160], char which) {
    enum { CODE = 120, BASE = 0x400000 };
    static const unsigned char code[] = {
        0x0f, 0x1f, 0x84, 0x00, 'M', 'H', 'S', 0,  /* nopl disp32(%rax,%rax,1) */
        0xb8, 0x3c, 0x00, 0x00, 0x00,              /* mov $60 (exit), %eax */
        0x31, 0xff,                                /* xor %edi, %edi */
        0x0f, 0x05,                                /* syscall */
    };
    size_t total = CODE + sizeof code;
    memset(out, 0, 160);
    unsigned char *e = out;
    memcpy(e, "\177ELF\2\1\1", 7);       /* 64-bit, little-endian, version 1 */
    e[16] = 2;                            /* ET_EXEC */
    e[18] = 62;                           /* EM_X86_64 */
    e[20] = 1;                            /* EV_CURRENT */
    uint64_t entry_va = BASE + CODE;
    memcpy(e + 24, &entry_va, 8);         /* e_entry (host is little-endian x86-64) */
    e[32] = 64;                           /* e_phoff */
    e[52] = 64;                           /* e_ehsize */
    e[54] = 56;                           /* e_phentsize */
    e[56] = 1;                            /* e_phnum */
    unsigned char *ph = out + 64;
    ph[0] = 1;                            /* PT_LOAD */
    ph[4] = 5;                            /* PF_R | PF_X */
    uint64_t va = BASE, sz = total, align = 0x1000;
    memcpy(ph + 16, &va, 8);              /* p_vaddr */
    memcpy(ph + 24, &va, 8);              /* p_paddr */
    memcpy(ph + 32, &sz, 8);              /* p_filesz */
    memcpy(ph + 40, &sz, 8);              /* p_memsz */
    memcpy(ph + 48, &align, 8);           /* p_align */
    memcpy(out + CODE, code, sizeof code);
    out[CODE + 7] = (unsigned char)which; /* 'T' start, 'P' stop */
    return total;
}

/* Appends s to buf (cap bytes) as one shell word in single quotes. */
static int shell_quote(char *buf, size_t cap, size_t *len, const char *s) {
    size_t need = 3 + strlen(s) * 4;
    if (*len + need + 1 >= cap)
        return -1;
    char *p = buf + *len;
    *p++ = ' ';
    *p++ = '\'';
    for (; *s; s++) {
        if (*s == '\'') {
            memcpy(p, "'\\''", 4);
            p += 4;
        } else {
            *p++ = *s;
        }
    }
    *p++ = '\'';
    *p = '\0';
    *len = (size_t)(p - buf);
    return 0;
}

int mhq_initramfs_write(const char *out, const char *busybox, const char *prog,
                        char *const argv[], const char *user_initrd, char *err, size_t errlen) {
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        err_set(err, errlen, "'%s' has no file name", prog);
        return -1;
    }
    char progpath[300];
    if (snprintf(progpath, sizeof progpath, "bin/%s", base) >= (int)sizeof progpath) {
        err_set(err, errlen, "program name '%s' too long", base);
        return -1;
    }
    /* The command line of the program inside /init. */
    size_t cap = 65536, len = 0;
    char *cmd = malloc(cap);
    if (cmd == NULL) {
        err_set(err, errlen, "out of memory");
        return -1;
    }
    cmd[0] = '\0';
    /* argv[0] inside the guest is /bin/BASENAME */
    char abs[310];
    snprintf(abs, sizeof abs, "/%s", progpath);
    int bad = shell_quote(cmd, cap, &len, abs) != 0;
    for (size_t i = 1; !bad && argv[i]; i++)
        bad = shell_quote(cmd, cap, &len, argv[i]) != 0;
    if (bad) {
        free(cmd);
        err_set(err, errlen, "the command line is longer than %zu bytes", cap);
        return -1;
    }
    /* Why each line: proc/sys/dev for the program; -onlcr so its output
     * lines reach the host without a carriage return; printk 0 so the
     * kernel's "Power down" does not follow the program's output. */
    static const char init_fmt[] =
        "#!/memhist/busybox sh\n"
        "# written by memhist record --engine qemu-system\n"
        "export PATH=/bin:/memhist\n"
        "/memhist/busybox mount -t proc proc /proc\n"
        "/memhist/busybox mount -t sysfs sysfs /sys\n"
        "/memhist/busybox mount -t devtmpfs devtmpfs /dev\n"
        "/memhist/busybox stty -onlcr 2>/dev/null\n"
        "cd /\n"
        "/memhist/start\n"
        "%s\n"
        "s=$?\n"
        "/memhist/stop\n"
        "echo \"$s\" > /dev/ttyS1\n"
        "echo 0 > /proc/sys/kernel/printk\n"
        "/memhist/busybox poweroff -f\n";
    size_t ilen = sizeof init_fmt + len;
    char *init = malloc(ilen);
    if (init == NULL) {
        free(cmd);
        err_set(err, errlen, "out of memory");
        return -1;
    }
    snprintf(init, ilen, init_fmt, cmd + 1 /* the leading space */);
    free(cmd);

    cpio c = {.f = fopen(out, "wb"), .err = err, .errlen = errlen};
    if (c.f == NULL) {
        free(init);
        err_set(err, errlen, "cannot create '%s': %s", out, strerror(errno));
        return -1;
    }
    int rc = 0;
    if (user_initrd) {
        FILE *in = fopen(user_initrd, "rb");
        if (in == NULL) {
            err_set(err, errlen, "cannot read initrd '%s': %s", user_initrd, strerror(errno));
            rc = -1;
        } else {
            char buf[65536];
            size_t got;
            while (rc == 0 && (got = fread(buf, 1, sizeof buf, in)) > 0)
                if (fwrite(buf, 1, got, c.f) != got) {
                    err_set(err, errlen, "writing the initramfs: %s", strerror(errno));
                    rc = -1;
                }
            fclose(in);
        }
        /* The next archive starts on a 4-byte boundary (the kernel skips
         * zero padding between archives). */
        if (rc == 0 && pad4(&c))
            rc = -1;
    }
    unsigned char start[160], stopm[160];
    size_t sl = marker_elf(start, 'T'), pl = marker_elf(stopm, 'P');
    static const char *const dirs[] = {"bin", "dev", "proc", "sys", "tmp", "memhist"};
    for (size_t i = 0; rc == 0 && i < sizeof dirs / sizeof dirs[0]; i++)
        rc = entry(&c, dirs[i], 040755, NULL, 0);
    /* The kernel opens /dev/console for /init before anything mounts devtmpfs. */
    if (rc == 0)
        rc = header(&c, "dev/console", 020600, 0, 5, 1);
    if (rc == 0)
        rc = entry_file(&c, "memhist/busybox", busybox);
    if (rc == 0)
        rc = entry(&c, "memhist/start", 0100755, start, sl);
    if (rc == 0)
        rc = entry(&c, "memhist/stop", 0100755, stopm, pl);
    if (rc == 0 && strcmp(base, "sh") != 0)
        rc = entry(&c, "bin/sh", 0120777, "/memhist/busybox", strlen("/memhist/busybox"));
    if (rc == 0)
        rc = entry_file(&c, progpath, prog);
    if (rc == 0)
        rc = entry(&c, "init", 0100755, init, strlen(init));
    if (rc == 0)
        rc = entry(&c, "TRAILER!!!", 0, NULL, 0);
    free(init);
    if (fclose(c.f) != 0 && rc == 0) {
        err_set(err, errlen, "writing '%s': %s", out, strerror(errno));
        rc = -1;
    }
    return rc;
}
