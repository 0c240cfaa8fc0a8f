// Linux type-check shim (not Apple's header): declares the subset of Apple's
// Objective-C runtime <objc/message.h> that metal-cpp uses (objc_msgSend and
// its _stret/_fpret variants), for type-checking on Linux only. Strict
// prototypes: callers cast these to the real function type, as metal-cpp does.
// Apple declares objc_msgSend_fpret only for i386/x86_64 and
// objc_msgSend_stret for every architecture except arm64; the Linux host
// compiler is x86_64, so metal-cpp's x86_64 code path (which uses both) is the
// one that gets type-checked.
#pragma once

#include <objc/objc.h>
#include <objc/runtime.h>

struct objc_super {
  id receiver;
  Class super_class;
};

OBJC_EXPORT void objc_msgSend(void /* id self, SEL op, ... */);
OBJC_EXPORT void objc_msgSendSuper(void /* struct objc_super* super, SEL op, ... */);

#if !defined(__arm64__) && !defined(__aarch64__)
OBJC_EXPORT void objc_msgSend_stret(void /* id self, SEL op, ... */);
OBJC_EXPORT void objc_msgSendSuper_stret(void /* struct objc_super* super, SEL op, ... */);
#endif

#if defined(__i386__) || defined(__x86_64__)
OBJC_EXPORT void objc_msgSend_fpret(void /* id self, SEL op, ... */);
#endif

#if defined(__x86_64__)
OBJC_EXPORT void objc_msgSend_fp2ret(void /* id self, SEL op, ... */);
#endif
