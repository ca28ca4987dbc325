// header_compile.cpp - the public header from C++ (extern "C"): the same
// checks as header_compile.c; linking proves the declarations have C
// linkage (a missing extern "C" would ask for mangled names).
#include "header_compile.c"

// The header is usable from a C++ namespace scope as well.
namespace heapscope_test {
static_assert(sizeof(hscope_error) >= 288, "hscope_error layout");
} // namespace heapscope_test
