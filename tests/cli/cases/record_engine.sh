# --engine: an unknown engine is a usage error (exit 2); --engine valgrind
# records with valgrind and says so in the metadata (engine, tracer,
# tracer_version); auto (the default) picks an available engine.
need valgrind

status memhist record --engine bogus -- /bin/true 2> err
head -n 1 err
memhist record -q --engine valgrind -o v -- /bin/true
memhist inspect v | grep -E '^  (engine|tracer) '
memhist inspect v | grep -qE '^  tracer_version = valgrind-[0-9]' && echo "version ok"
memhist record -q -o a -- /bin/true
memhist inspect a | grep -qE '^  engine = (valgrind|qemu)$' && echo "auto ok"
