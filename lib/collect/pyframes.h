/* pyframes.h — Python functions in the stacks of marple-callstack: the user
 * side of bpf/python.bpf.h.
 *
 * Asked by the BPF side about each process it samples (py_requests), it
 * looks for an ELF mapped by the process that exports Py_Version (the
 * python3 binary or a libpython, whatever its name), reads the version and,
 * for a version whose struct layout it knows (3.11), puts in py_procs where
 * _PyRuntime is and the offsets to walk; any other version is said once on
 * stderr and profiled natively.  At the end, each sample's Python frames
 * (code object, instruction) become "qualname (file:line)", read from the
 * process's memory (the object's type checked to be PyCode_Type first) and
 * cached, and replace in the native stack the _PyEval_EvalFrameDefault
 * activation that ran them (its symbol and its compiler-split cold part).
 *
 *   struct pyframes *pf = pyframes_new(skel->obj, syms);    // after load; NULL: natively
 *   pyframes_listen(pf, rb);               // requests served when rb is polled
 *   ... capture ...
 *   pyframes_collect_counts(pf, sf, bpf_map__fd(skel->maps.py_counts), t);
 *   pyframes_trailer_add(pf, trailer);    // "python": {...}
 *   pyframes_free(pf);
 */
#ifndef MARPLE_PYFRAMES_H
#define MARPLE_PYFRAMES_H

#include <jansson.h>

struct pyframes;
struct bpf_object;
struct ring_buffer;
struct stackframes;
struct syms_cache;
struct hashtab;

/* For a loaded object that includes bpf/python.bpf.h; NULL (after a
 * warning) when the frames cannot be walked: stacks stay native. */
struct pyframes *pyframes_new(struct bpf_object *obj, struct syms_cache *syms);
/* Serve the object's py_requests when rb is polled; 0 or -1. */
int pyframes_listen(struct pyframes *pf, struct ring_buffer *rb);
/* Add each sample of py_counts (struct py_stack_key -> u64), its Python
 * frames merged into its native ones, to t (stackframes_collect). */
void pyframes_collect_counts(struct pyframes *pf, struct stackframes *sf, int py_counts_fd, struct hashtab *t);
/* "python": processes seen, walked, refused; the BPF counters; merges and
 * mismatches; code objects named and the cache's size. */
void pyframes_trailer_add(struct pyframes *pf, json_t *trailer);
/* Continuous mode, after a section's trailer: the next trailer's counts
 * (processes walked, the BPF counters, merges...) are the next section's
 * own; the code objects and the cache are as they are. */
void pyframes_next_section(struct pyframes *pf);
void pyframes_free(struct pyframes *pf);

/* Pair the na native activations of the eval loop with the ns segments of
 * Python frames (one per activation, ending at its is_entry frame), both
 * leaf first: pair[a] is activation a's segment, or -1 (stays native).
 * Equal counts pair one to one.  Otherwise only what is certain: from the
 * outermost when the native stack is whole and the Python frames complete
 * (complete 0: the walk was cut before its last entry frame), else from the
 * leaf.  Returns how many pairs. */
int pyframes_pair(int na, int ns, int complete, int native_whole, int *pair);

#endif
