// Linux type-check shim (not Apple's header): declares the subset of Apple's
// Objective-C runtime <objc/runtime.h> that metal-cpp and MLX use, for
// type-checking on Linux only.
#pragma once

#include <stddef.h>

#include <objc/objc.h>

typedef struct objc_method* Method;
typedef struct objc_ivar* Ivar;
typedef struct objc_category* Category;
typedef struct objc_property* objc_property_t;

// Outside Objective-C, Protocol is an object type.
typedef struct objc_object Protocol;

OBJC_EXPORT Class objc_getClass(const char* name);
OBJC_EXPORT Class objc_lookUpClass(const char* name);
OBJC_EXPORT Protocol* objc_getProtocol(const char* name);

OBJC_EXPORT Class object_getClass(id obj);
OBJC_EXPORT const char* class_getName(Class cls);
OBJC_EXPORT Class class_getSuperclass(Class cls);
OBJC_EXPORT BOOL class_respondsToSelector(Class cls, SEL sel);
OBJC_EXPORT Method class_getInstanceMethod(Class cls, SEL name);
OBJC_EXPORT Method class_getClassMethod(Class cls, SEL name);
OBJC_EXPORT BOOL class_addMethod(Class cls, SEL name, IMP imp, const char* types);
OBJC_EXPORT BOOL class_conformsToProtocol(Class cls, Protocol* protocol);

OBJC_EXPORT Class objc_allocateClassPair(Class superclass, const char* name, size_t extraBytes);
OBJC_EXPORT void objc_registerClassPair(Class cls);

OBJC_EXPORT SEL method_getName(Method m);
OBJC_EXPORT IMP method_getImplementation(Method m);
