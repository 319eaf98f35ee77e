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

/* 1 when qemu-x86_64 and the plugin can be found; 0 otherwise, with one
 * line saying what is missing in why (n bytes, may be 0). */
int engine_qemu_available(char *why, size_t n);

#endif /* MH_TOOLS_ENGINE_QEMU_H */
