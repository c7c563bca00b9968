/* pyframes.h — Python functions in the stacks of every stack collector:
 * the user side of bpf/python.bpf.h.  PHP's too: an ELF exporting
 * executor_globals and execute_ex is a PHP, its version the module API
 * number of its build id (lib/collect/phplayout.h); its functions
 * (zend_function: "Class::method (file:line)", internal ones by name
 * alone, kind "php") replace each execute_ex activation they ran, as
 * Python's replace the eval loop's.  And Perl's: an ELF exporting
 * PL_curinterp and Perl_runops_standard (ithreads) is a Perl, its version
 * PL_revision.PL_version.PL_subversion (lib/collect/perllayout.h); its subs
 * ("Package::sub (file:line)", kind "perl") replace each runops activation.
 * Ruby's likewise: a libruby exporting ruby_current_vm_ptr and rb_vm_exec
 * (lib/collect/rubylayout.h); its iseqs ("label (file:line)") replace
 * each rb_vm_exec activation, its C methods ("Class#method") go before
 * their C functions' native frames (framemerge.h), kind "ruby".
 * The trailer's "python" counts all four (its interpreters: "php 8.2.36
 * table", "perl 5.36.0 table", "ruby 3.1.2 table").
 *
 * Asked by the BPF side about each process it samples (PROCNEWS_PYTHON), it
 * looks for an ELF mapped by the process that is a CPython (the python3
 * binary or a libpython, whatever its name: exports _PyEval_EvalFrameDefault,
 * PyCode_Type...), finds its version (Py_Version from 3.11, else the symbols
 * each version added) and its layout (lib/collect/pylayout.c: a table for
 * 3.6-3.13, the _Py_DebugOffsets 3.13+ keeps, checked one against the
 * other), and puts in py_procs where _PyRuntime is and the offsets to walk;
 * a process answered native for want of one is looked at again when the
 * unwinder finds a file mapped since (PROCNEWS_UNWIND_VMA: a libpython
 * dlopen'ed later) or asks for its mappings again (PROCNEWS_UNWIND_REQUEST),
 * its samples then walked (pids_seen's answer cleared once it is given);
 * a process it does not walk (Python 2, a layout it cannot trust) is said
 * once on stderr with the reason and profiled natively.  The BPF side stores a Python process's
 * user stacks with its Python frames (code object, instruction) after the
 * native ones; the first time it stores one, it asks for its code objects to
 * be named now, while the process lives (without waking us when it finds
 * them all in py_codes, which we fill as we name them).  When stacks are written, each
 * stack's Python frames become "qualname (file:line)", read from the
 * process's memory (the object's type checked to be PyCode_Type first) and
 * cached, and replace in the native stack the _PyEval_EvalFrameDefault
 * activation that ran them (its symbol and its compiler-split cold part).
 * lib/collect/stackcollector.c does all this for every stack collector:
 *
 *   struct pyframes *pf = pyframes_open();                 // NULL: natively
 *   skel->rodata->stacks_python = 1;                       // before load
 *   skel->rodata->py_walks = pyframes_walks_for(pf, pid);  // -p: its interpreter's alone
 *   pyframes_bind(pf, skel->obj, syms);                    // after load
 *   pyframes_listen(pf, news);             // requests served when the news are polled
 *   pyframes_merge_into(pf, sf);           // sf's stacks get their Python frames
 *   ... capture, write the stacks ...
 *   pyframes_trailer_add(pf, trailer);    // "python": {...}
 *   pyframes_free(pf);
 */
#ifndef MARPLE_PYFRAMES_H
#define MARPLE_PYFRAMES_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

struct pyframes;
struct bpf_object;
struct ring_buffer;
struct stackframes;
struct syms_cache;

/* Made before the BPF object is loaded; NULL (after a warning) when the
 * frames cannot be walked: stacks stay native. */
struct pyframes *pyframes_open(void);
/* Before load: the walks (enum py_walks, bpf/python.h: the rodata
 * py_walks) a capture of process pid alone needs: its interpreter's, when
 * it maps one now (read as its first sample would have it read, and not
 * again), else PY_WALKS_ALL (a launcher's libpython may come).  A process
 * of another interpreter (the target exec'ed one) is then refused, said
 * on stderr and counted.  Each walk left out is 1-3 ms less of the
 * verifier's checking at load. */
uint32_t pyframes_walks_for(struct pyframes *pf, pid_t pid);
/* After load: obj, which includes bpf/python.bpf.h (its py_walks as
 * pyframes_walks_for said, or all), and the symbolizer; -1 if obj has no
 * Python maps. */
int pyframes_bind(struct pyframes *pf, struct bpf_object *obj, struct syms_cache *syms);
/* Serve the object's requests (PROCNEWS_PYTHON on its process news,
 * procnewsring.h) when the news are polled. */
struct procnewsring;
void pyframes_listen(struct pyframes *pf, struct procnewsring *news);
/* The user stacks sf names get their Python frames merged into their
 * native ones (stackframes_set_python). */
void pyframes_merge_into(struct pyframes *pf, struct stackframes *sf);
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
 * Equal counts pair one to one.  Otherwise only what is certain
 * (pyframes_from_root): from the outermost, else from the leaf.  Returns how
 * many pairs. */
int pyframes_pair(int na, int ns, int complete, int native_whole, int *pair);
/* Are unequal counts paired from the outermost?  Only when the native stack
 * is whole, the Python frames complete (complete 0: the walk was cut before
 * its last entry frame) and the native side has the extra activations (one
 * starting or ending has no Python frame yet, or no more).  More segments
 * than activations mean the native stack is cut after all, though it looked
 * whole (a thread's parent inside clone3 ends its unwinding there): the
 * leaf side is what is known, and the outer segments go before the cut. */
int pyframes_from_root(int na, int ns, int complete, int native_whole);

#endif
