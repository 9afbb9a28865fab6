//go:build cgo && !purego && linux

package native

/*
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

// dp_symbol_file returns the file of the loaded object that provides the
// symbol name in the process's global scope (the one LAPACKE's own calls
// bind to), or NULL.
static const char* dp_symbol_file(const char* name) {
	void* p = dlsym(RTLD_DEFAULT, name);
	Dl_info info;
	if (p == NULL || dladdr(p, &info) == 0) return NULL;
	return info.dli_fname;
}
*/
import "C"

import "unsafe"

// symbolFile returns the file of the shared object that provides the C
// symbol name to the process ("" if none): which LAPACK a LAPACKE call
// reaches is decided by the dynamic linker, not by this package.
func symbolFile(name string) string {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	f := C.dp_symbol_file(cs)
	if f == nil {
		return ""
	}
	return C.GoString(f)
}
