/*
 * plugin_main.c - loads a shared object with dlopen and runs its
 * consumer_main(argc, argv), the way a QEMU plugin or a Python extension is
 * loaded. install_test.sh builds consumer.c into such an object together
 * with the static libmemhist.a, which must therefore be position-independent.
 * Usage: plugin_main OBJECT ARGS...; exits with consumer_main's status, or 1
 * when the object cannot be loaded.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: plugin_main OBJECT ARGS...\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "plugin_main: %s\n", dlerror());
        return 1;
    }
    int (*run)(int, char **);
    *(void **)&run = dlsym(h, "consumer_main");
    if (!run) {
        fprintf(stderr, "plugin_main: %s\n", dlerror());
        return 1;
    }
    int rc = run(argc - 1, argv + 1);
    dlclose(h);
    return rc;
}
