// Linux type-check shim (not Apple's header): declares the subset of Apple's
// Mach types (<mach/mach_types.h>, <mach/port.h>, <mach/vm_types.h>) that
// metal-cpp and MLX use, for type-checking on Linux only. Sizes follow arm64 macOS.
#pragma once

#include <stdint.h>

typedef unsigned int natural_t;
typedef int integer_t;

typedef natural_t mach_port_name_t;
typedef unsigned int mach_port_t;
#define MACH_PORT_NULL 0

typedef mach_port_t task_t;
typedef mach_port_t task_name_t;
typedef mach_port_t task_id_token_t;
typedef mach_port_t thread_t;
typedef mach_port_t host_t;

typedef uintptr_t vm_offset_t;
typedef uintptr_t vm_size_t;
typedef uint64_t mach_vm_address_t;
typedef uint64_t mach_vm_size_t;
