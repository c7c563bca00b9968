/* xml.h — writing text into SVG and HTML safely.  Names come from traced
 * programs and are hostile: every byte that reaches markup goes through here. */
#ifndef MARPLE_XML_H
#define MARPLE_XML_H

#include <stddef.h>
#include <stdio.h>

/* Text or attribute value: & < > " ' escaped, control characters and invalid
 * UTF-8 replaced by U+FFFD, so any XML parser accepts the result. */
void xml_escape_write(FILE *f, const char *s, size_t len);
void xml_escape_cstr(FILE *f, const char *s);

/* A JSON string literal (with quotes) safe inside <script> and CDATA: '<', '>',
 * '&', U+2028/9 as \u escapes, invalid UTF-8 as U+FFFD. */
void xml_js_string_write(FILE *f, const char *s, size_t len);
void xml_js_string_cstr(FILE *f, const char *s);

#endif
