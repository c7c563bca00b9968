/* fakepython — looks like a CPython of a version marple has no frame layout
 * for (3.14.0): it exports Py_Version and the other symbols marple looks for
 * (-rdynamic puts them in .dynsym, as libpython and python3 do), and burns
 * CPU in a function named _PyEval_EvalFrameDefault.  marple-callstack must
 * say so once and profile it natively.  Usage: fakepython SECONDS.
 * WORKLOAD_CFLAGS: -O1 -g -rdynamic -fno-omit-frame-pointer
 */
#include <stdlib.h>
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
	_PyRuntime[0] = (char)sink;
	while (time(NULL) < end)
		_PyEval_EvalFrameDefault();
	return 0;
}
