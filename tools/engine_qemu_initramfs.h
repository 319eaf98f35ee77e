/*
 * engine_qemu_initramfs.h - the guest of `memhist record --engine
 * qemu-system`: an initramfs (cpio "newc") built from the host's static
 * busybox and the program to run, with an /init that runs the program
 * between the plugin's start and stop markers (qemu/plugin.c) and powers
 * the machine off. Nothing of it is committed to the repository: the
 * markers are two 137-byte ELF programs written here.
 */
#ifndef MH_TOOLS_ENGINE_QEMU_INITRAMFS_H
#define MH_TOOLS_ENGINE_QEMU_INITRAMFS_H

#include <stddef.h>

/* 1: a statically linked x86-64 ELF executable; 0: an x86-64 ELF with a
 * program interpreter (dynamic); -1: neither, or unreadable. */
int mhq_elf_static(const char *path);

/* Writes the initramfs to out: user_initrd's bytes first when not NULL
 * (the kernel unpacks concatenated archives in order, so memhist's files
 * win), then /init, /memhist/{busybox,start,stop}, /bin/sh and
 * /bin/BASENAME = prog. /init runs BASENAME with argv[1..] (quoted for the
 * shell), writes its exit status as one decimal line to /dev/ttyS1 and
 * powers off. 0, or -1 with a line in err. */
int mhq_initramfs_write(const char *out, const char *busybox, const char *prog,
                        char *const argv[], const char *user_initrd, char *err, size_t errlen);

#endif /* MH_TOOLS_ENGINE_QEMU_INITRAMFS_H */
