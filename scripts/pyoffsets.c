/* pyoffsets.c — print the struct offsets lib/collect/pylayout.c's table
 * holds, from one CPython's own headers:
 *   inc=$(pyenv root)/versions/3.12.1/include/python3.12
 *   cc -w -I$inc -I$inc/internal scripts/pyoffsets.c -o /tmp/o && /tmp/o
 * (Not built by make: it needs each version's headers.) */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#if PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#elif PY_VERSION_HEX >= 0x03080000
#include <internal/pycore_pystate.h>
#elif PY_VERSION_HEX >= 0x03070000
#include <internal/pystate.h>
#endif
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#include <internal/pycore_code.h>
#endif

#include <stddef.h>
#include <stdio.h>
#define P(name, expr) printf("%s=%zu ", name, (size_t)(expr))
int main(void)
{
	printf("%d.%d ", PY_MAJOR_VERSION, PY_MINOR_VERSION);
#if PY_VERSION_HEX >= 0x030c0000
	P("tss_key", offsetof(_PyRuntimeState, autoTSSkey));
	P("interp_head", offsetof(_PyRuntimeState, interpreters.head));
#elif PY_VERSION_HEX >= 0x03070000
	P("tss_key", offsetof(_PyRuntimeState, gilstate.autoTSSkey));
	P("tstate_current", offsetof(_PyRuntimeState, gilstate.tstate_current));
	P("interp_head", offsetof(_PyRuntimeState, interpreters.head));
#endif
#if PY_VERSION_HEX >= 0x030b0000
	P("interp_threads", offsetof(PyInterpreterState, threads.head));
#else
	P("interp_threads", offsetof(PyInterpreterState, tstate_head));
#endif
	P("tstate_next", offsetof(PyThreadState, next));
	P("tstate_interp", offsetof(PyThreadState, interp));
	P("tstate_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030b0000
	P("tstate_native_tid", offsetof(PyThreadState, native_thread_id));
#endif
#if PY_VERSION_HEX >= 0x030d0000
	P("tstate_frame", offsetof(PyThreadState, current_frame));
#elif PY_VERSION_HEX >= 0x030b0000
	P("tstate_cframe", offsetof(PyThreadState, cframe));
	P("cframe_current", offsetof(_PyCFrame, current_frame));
#else
	P("tstate_frame", offsetof(PyThreadState, frame));
	P("frame_back", offsetof(PyFrameObject, f_back));
	P("frame_code", offsetof(PyFrameObject, f_code));
	P("frame_lasti", offsetof(PyFrameObject, f_lasti));
#endif
#if PY_VERSION_HEX >= 0x030d0000
	P("frame_code", offsetof(_PyInterpreterFrame, f_executable));
	P("frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
	P("frame_owner", offsetof(_PyInterpreterFrame, owner));
#elif PY_VERSION_HEX >= 0x030c0000
	P("frame_code", offsetof(_PyInterpreterFrame, f_code));
	P("frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
	P("frame_owner", offsetof(_PyInterpreterFrame, owner));
#elif PY_VERSION_HEX >= 0x030b0000
	P("frame_code", offsetof(_PyInterpreterFrame, f_code));
	P("frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
	P("frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
	P("code_filename", offsetof(PyCodeObject, co_filename));
#if PY_VERSION_HEX >= 0x030b0000
	P("code_qualname", offsetof(PyCodeObject, co_qualname));
	P("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
#elif PY_VERSION_HEX >= 0x030a0000
	P("code_qualname", offsetof(PyCodeObject, co_name));
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
#else
	P("code_qualname", offsetof(PyCodeObject, co_name));
	P("code_linetable", offsetof(PyCodeObject, co_lnotab));
#endif
	P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("type_members", offsetof(PyTypeObject, tp_members));
	P("str_ascii_data", sizeof(PyASCIIObject));
	P("str_compact_data", sizeof(PyCompactUnicodeObject));
	printf("\n");
	return 0;
}
