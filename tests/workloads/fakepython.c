/* fakepython — looks like a CPython of a version marple has no frame layout
 * for (3.14.0): it exports Py_Version and the other symbols marple looks for
 * (-rdynamic puts them in .dynsym, as libpython and python3 do), and burns
 * CPU in a function named _PyEval_EvalFrameDefault.  Its _PyRuntime starts
 * with no _Py_DebugOffsets, or (KIND) the cookie "xdebugpy" and 3.14.0 then
 * either a free-threaded flag ("freethreaded") or offsets in no form marple
 * reads ("badform": every word 0xffff).  marple-callstack must say why
 * once and profile it natively.  Usage: fakepython SECONDS [KIND].
 * WORKLOAD_CFLAGS: -O1 -g -rdynamic -fno-omit-frame-pointer
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

const unsigned long Py_Version = 0x030e00f0;	/* 3.14.0 final */
char _PyRuntime[4096];
char PyCode_Type[512], PyUnicode_Type[512], PyBytes_Type[512];
volatile unsigned long sink;

__attribute__((noinline)) void _PyEval_EvalFrameDefault(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink = sink * 6364136223846793005ull + i;
}

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 5);
	const char *kind = argc > 2 ? argv[2] : "";
	unsigned long words[80];

	if (strcmp(kind, "freethreaded") == 0 || strcmp(kind, "badform") == 0) {
		for (int i = 0; i < 80; i++)
			words[i] = 0xffff;
		memcpy(words, "xdebugpy", 8);
		words[1] = Py_Version;
		words[2] = strcmp(kind, "freethreaded") == 0;
		memcpy(_PyRuntime, words, sizeof(words));
	}
	while (time(NULL) < end)
		_PyEval_EvalFrameDefault();
	return 0;
}
