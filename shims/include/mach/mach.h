// Linux type-check shim (not Apple's header): declares the subset of Apple's
// <mach/mach.h> umbrella that metal-cpp and MLX use (kern_return_t,
// task_id_token_t, vm_page_size, mach_task_self), for type-checking on Linux only.
#pragma once

#include <mach/kern_return.h>
#include <mach/mach_types.h>
#include <mach/vm_page_size.h>

#ifdef __cplusplus
extern "C" {
#endif

extern mach_port_t mach_task_self_;
#define mach_task_self() mach_task_self_

#ifdef __cplusplus
}
#endif
