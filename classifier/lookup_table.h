/* lookup_table.h: this project's lookups, one row each, with their
 * priorities at start-up in the two places they run.  The one source of
 * these numbers: standalone/ and plugin/ both read them from here, and the
 * tests of ovs-vswitchd compare what it reports with this table.
 *
 *   library  the standalone library's registry (standalone/
 *            builtin_lookups.cpp: tests, benchmarks, programs); -1: not a
 *            registry entry there (jit_fused and tail_index are the
 *            classifier's fused provider and tail index instead)
 *   plugin   ovs-vswitchd built with the plugin's lookups as defaults
 *            (patches/build-ovs.sh --plugin-default or --validate, and
 *            Debian's packages: plugin/ovs_registration.c), above OVS's
 *            own generic at 1; -1: not registered there.  Without them
 *            every lookup is registered at 0, so OVS's own stand.
 *
 * The highest priority whose probe accepts a subtable serves it.  "generic"
 * and "runtime" are one algorithm (lookups/lookup_generic.cpp): in
 * ovs-vswitchd the name "generic" is OVS's own lookup's.
 *
 * Plain C and C++: OVSCLS_LOOKUP_TABLE(X) expands X(name, library, plugin)
 * once per row.  Code names a lookup with OVSCLS_LOOKUP_NAME_<name> (the
 * name OVS shows, in dpif-netdev/subtable-lookup-info-get and the
 * dpcls-plugin/... commands), never with a string literal of its own, so
 * that a lookup that is not in this table is a compile error. */
#ifndef OVSCLS_LOOKUP_TABLE_H
#define OVSCLS_LOOKUP_TABLE_H 1

/* clang-format off */
/*                            name      library  plugin */
#define OVSCLS_LOOKUP_TABLE(X)         \
    X(generic,                  1,      -1)   \
    X(specialized,              2,       3)   \
    X(runtime,                 -1,       2)   \
    X(jit_avx2,                 3,       4)   \
    X(jit_fused,               -1,       4)   \
    X(tail_index,              -1,       4)
/* clang-format on */

/* OVSCLS_LIBRARY_PRIO_<name> and OVSCLS_PLUGIN_PRIO_<name>. */
#define OVSCLS_LOOKUP_LIBRARY_PRIO_(name, library, plugin) OVSCLS_LIBRARY_PRIO_##name = library,
#define OVSCLS_LOOKUP_PLUGIN_PRIO_(name, library, plugin) OVSCLS_PLUGIN_PRIO_##name = plugin,
enum { OVSCLS_LOOKUP_TABLE(OVSCLS_LOOKUP_LIBRARY_PRIO_) };
enum { OVSCLS_LOOKUP_TABLE(OVSCLS_LOOKUP_PLUGIN_PRIO_) };
#undef OVSCLS_LOOKUP_LIBRARY_PRIO_
#undef OVSCLS_LOOKUP_PLUGIN_PRIO_

/* OVSCLS_LOOKUP_NAME_<name>: the row's name as a string.  A static array in
 * each translation unit, marked unused for the ones that name no lookup. */
#define OVSCLS_LOOKUP_DEFINE_NAME_(name, library, plugin) \
    static const char OVSCLS_LOOKUP_NAME_##name[] __attribute__((unused)) = #name;
OVSCLS_LOOKUP_TABLE(OVSCLS_LOOKUP_DEFINE_NAME_)
#undef OVSCLS_LOOKUP_DEFINE_NAME_

#endif /* OVSCLS_LOOKUP_TABLE_H */
