// Linux type-check shim (not Apple's header): umbrella for the subset of
// Apple's CoreGraphics that metal-cpp and MLX use, for type-checking on Linux only.
#pragma once

#include <CoreGraphics/CGBase.h>
#include <CoreGraphics/CGColorSpace.h>
#include <CoreGraphics/CGGeometry.h>
