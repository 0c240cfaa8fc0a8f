// Linux type-check shim (not Apple's header): declares the subset of Apple's
// <sys/sysctl.h> that MLX uses (sysctl, sysctlbyname), for type-checking on
// Linux only. (glibc >= 2.32 no longer ships <sys/sysctl.h>; this one wins via -isystem.)
#pragma once

#include <stddef.h>

#define CTL_KERN 1
#define CTL_HW 6
#define HW_NCPU 3
#define HW_PAGESIZE 7
#define HW_MEMSIZE 24

#ifdef __cplusplus
extern "C" {
#endif

int sysctl(int* name, unsigned int namelen, void* oldp, size_t* oldlenp, void* newp, size_t newlen);
int sysctlbyname(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen);
int sysctlnametomib(const char* name, int* mibp, size_t* sizep);

#ifdef __cplusplus
}
#endif
