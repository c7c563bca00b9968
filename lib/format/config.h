/* config.h — marple's configuration, read once: the built-in defaults (the
 * original MARPLE's, and each collector's display from the registry), then
 * /etc/marple/config, then the user's ($XDG_CONFIG_HOME/marple/config or
 * ~/.config/marple/config), or only $MARPLE_CONFIG.  Every line is checked
 * against the registry (interfaces, displays, renderers' keys); the first bad
 * one is named with its file and line, and the program exits 2.  marple-config
 * prints what is read here; marple-collect plans a capture with it.
 *
 *   if ((status = config_load("build/marple-registry", 0)))
 *           exit(status);
 *   char *hz = config_value("callstack", "frequency");   // "99"
 */
#ifndef MARPLE_CONFIG_H
#define MARPLE_CONFIG_H

#include <stdio.h>

/* Reads the defaults and the config files, once: 0, or the status the
 * program exits with, the reason said (a bad config line: 2; a bad
 * registry, an unreadable file: 1).  The original MARPLE's settings that do
 * nothing here are named on stderr unless quiet (a check before the run
 * that names them). */
int config_load(const char *registry_path, int quiet);
/* Every setting read, "SECTION<TAB>KEY<TAB>VALUE\n" a line, later ones winning. */
const char *config_settings(void);
/* The value that won for [section] key, copied; NULL if it is not set. */
char *config_value(const char *section, const char *key);
/* The effective configuration for people (marple config): the files read,
 * then each section's keys once, with the value that won. */
void config_print(FILE *f);

#endif
