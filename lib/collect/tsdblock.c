/* tsdblock.c — where glibc keeps a thread's first pthread keys (see
 * tsdblock.h). */
#include "tsdblock.h"

#include <pthread.h>
#include <string.h>

int tsdblock_find(uint32_t *out)
{
	static char marker;
	pthread_key_t key;
	int rc = -1;

	if (pthread_key_create(&key, NULL) != 0)
		return -1;
	if (key < 32 && pthread_setspecific(key, &marker) == 0) {
		const unsigned char *self = (const unsigned char *)pthread_self();
		for (size_t off = 0; off + 8 <= 4096; off += 8) {
			void *v;
			memcpy(&v, self + off, sizeof(v));
			if (v == &marker && off >= 8 + 16 * (size_t)key) {
				*out = (uint32_t)(off - 8 - 16 * key);
				rc = 0;
				break;
			}
		}
	}
	pthread_key_delete(key);
	return rc;
}
