/* gzb64.h — bulk data for a self-contained HTML page: bytes gzip-compressed
 * and base64-encoded into a JS string literal, which the page turns back
 * into bytes with atob() and the browser's DecompressionStream("gzip").
 *
 *   fputs("var D=", f);
 *   gzb64_write(f, samples, nbytes, 6);     -- "H4sIAAAA..."
 */
#ifndef MARPLE_GZB64_H
#define MARPLE_GZB64_H

#include <stddef.h>
#include <stdio.h>

/* Write "<base64 of gzip(data)>" (with the quotes).  level: zlib's 1..9.
 * Exits 1 with a message if zlib fails. */
void gzb64_write(FILE *f, const void *data, size_t len, int level);

#endif
