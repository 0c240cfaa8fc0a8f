// Linux type-check shim (not Apple's header): declares the subset of Apple's
// CoreGraphics <CGBase.h> that metal-cpp (QuartzCore) uses, for type-checking
// on Linux only. CGFloat is double, as on every 64-bit Apple platform.
#pragma once

#include <float.h>

#include <CoreFoundation/CoreFoundation.h>

#define CG_EXTERN CF_EXPORT
#define CG_INLINE static inline
#define CGFLOAT_IS_DOUBLE 1
typedef double CGFloat;
#define CGFLOAT_MIN DBL_MIN
#define CGFLOAT_MAX DBL_MAX
