// Linux type-check shim (not Apple's header): declares the subset of Apple's
// Objective-C runtime <objc/objc.h> that metal-cpp and MLX use, for
// type-checking C++ (not Objective-C++) on Linux only. Modeled on arm64 macOS,
// where BOOL is bool (OBJC_BOOL_IS_BOOL).
#pragma once

#ifdef __OBJC__
#error "objc shim: Objective-C / Objective-C++ is not supported by this type-check lane"
#endif

#ifdef __cplusplus
#define OBJC_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define OBJC_EXPORT extern __attribute__((visibility("default")))
#endif

typedef struct objc_class* Class;

struct objc_object {
  Class isa;
};

typedef struct objc_object* id;
typedef struct objc_selector* SEL;

// Strict dispatch prototypes (OBJC_OLD_DISPATCH_PROTOTYPES == 0): IMP and the
// objc_msgSend family must be cast to the real function type before calling.
#ifndef OBJC_OLD_DISPATCH_PROTOTYPES
#define OBJC_OLD_DISPATCH_PROTOTYPES 0
#endif
typedef void (*IMP)(void);

#define OBJC_BOOL_IS_BOOL 1
typedef bool BOOL;
#define YES ((BOOL)1)
#define NO ((BOOL)0)

#ifdef __cplusplus
#define Nil nullptr
#define nil nullptr
#else
#define Nil ((void*)0)
#define nil ((void*)0)
#endif

OBJC_EXPORT const char* sel_getName(SEL sel);
OBJC_EXPORT SEL sel_registerName(const char* str);
OBJC_EXPORT SEL sel_getUid(const char* str);
OBJC_EXPORT BOOL sel_isMapped(SEL sel);
OBJC_EXPORT const char* object_getClassName(id obj);
