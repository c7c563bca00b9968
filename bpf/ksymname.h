/* ksymname.h — sizes shared by bpf/ksymname.bpf.c and lib/collect/syms.c. */
#ifndef MARPLE_KSYMNAME_H
#define MARPLE_KSYMNAME_H

#define KSYMNAME_BATCH 128	/* addresses named per program run */
#define KSYMNAME_LEN 192	/* "name+0xoff/0xsize [module]" (KSYM_NAME_LEN is 512; longer is cut) */

#endif
