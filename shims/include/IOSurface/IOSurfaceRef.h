// Linux type-check shim (not Apple's header): declares the subset of Apple's
// <IOSurface/IOSurfaceRef.h> that metal-cpp uses, for type-checking on Linux only.
#pragma once

#include <CoreFoundation/CoreFoundation.h>

typedef struct CF_BRIDGED_TYPE(id) __IOSurface* IOSurfaceRef;
typedef uint32_t IOSurfaceID;

CF_EXPORT IOSurfaceID IOSurfaceGetID(IOSurfaceRef buffer);
CF_EXPORT size_t IOSurfaceGetWidth(IOSurfaceRef buffer);
CF_EXPORT size_t IOSurfaceGetHeight(IOSurfaceRef buffer);
