// Linux type-check shim (not Apple's header): declares the subset of Apple's
// <mach/vm_page_size.h> that MLX uses (vm_page_size), for type-checking on
// Linux only.
#pragma once

#include <mach/mach_types.h>

#ifdef __cplusplus
extern "C" {
#endif

extern vm_size_t vm_page_size;
extern vm_size_t vm_page_mask;
extern int vm_page_shift;

#ifdef __cplusplus
}
#endif
