/*
 * engine_qemu.h - `memhist record --engine qemu`: runs the program under
 * qemu-x86_64 (user mode) with the memhist TCG plugin and drains the
 * plugin's shared-memory rings into the writer (qemu/ring.h, qemu/README.md).
 */
#ifndef MH_TOOLS_ENGINE_QEMU_H
#define MH_TOOLS_ENGINE_QEMU_H

#include <stddef.h>

#include "engine.h"

/* Runs argv[0] (found like execvp) under qemu and appends every access to w
 * in transition order, as engine.h's contract says. The emulator is
 * o->tool, else $MEMHIST_QEMU, else qemu-x86_64 in PATH; the plugin is
 * $MEMHIST_QEMU_PLUGIN, else libmemhist-qemu.so next to this executable, in
 * ../qemu/ from it (build tree), or in the install directory.
 * Accesses get has_linear = 1 and physical = linear (user mode).
 * Returns 0 (res filled, including a program killed by a signal), a
 * negative MH_E* from the writer, or ENGINE_EFAILED with res->error.
 * Sets metadata qemu_untraced_forks / qemu_untraced_execs when the program
 * forked or called execve (what ran there was not traced) and warns on
 * stderr unless o->quiet. */
int engine_qemu_run(char *const argv[], const engine_opts *o, mh_writer *w,
                    volatile sig_atomic_t *stop, engine_result *res);

/* Full-system recording (engine_qemu_system.c): boots a Linux kernel under
 * qemu-system-x86_64 (TCG, one host thread, -icount) with an initramfs it
 * builds (busybox-static, argv[0] copied in, an /init that runs argv
 * between the plugin's start and stop markers, then powers off) and
 * appends every access of the guest between the markers, kernel and user,
 * with its virtual (linear) and physical address. Device (MMIO) accesses
 * are skipped and counted. argv[0]'s output goes to the caller's stdout
 * (the guest's serial console), its exit status is res->wait_status.
 * Kernel: o->kernel, $MEMHIST_KERNEL, /var/cache/memhist/vmlinuz (what
 * tools/scripts/deps.sh extracts from Debian's linux-image-amd64), the
 * newest readable /boot/vmlinuz-*. o->initrd: an initramfs (its files, e.g.
 * the libraries of a dynamic program) loaded before memhist's own.
 * Metadata: qemu_system_kernel, qemu_system_kernel_version, qemu_system_machine,
 * qemu_io_accesses_skipped,
 * qemu_unmapped_accesses, qemu_instructions. */
int engine_qemu_system_run(char *const argv[], const engine_opts *o, mh_writer *w,
                           volatile sig_atomic_t *stop, engine_result *res);

/* 1 when qemu-x86_64 and the plugin can be found; 0 otherwise, with one
 * line saying what is missing in why (n bytes, may be 0). */
int engine_qemu_available(char *why, size_t n);

#endif /* MH_TOOLS_ENGINE_QEMU_H */
