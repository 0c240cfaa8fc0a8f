// Linux type-check shim (not Apple's header): declares the subset of Apple's
// libdispatch <dispatch/dispatch.h> that metal-cpp and MLX use, for
// type-checking C++ on Linux only. Object types follow Apple's C++ (non-ObjC)
// form: opaque structs deriving from dispatch_object_s. Requires -fblocks.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifndef __cplusplus
#error "dispatch shim: only C++ is supported"
#endif

#define DISPATCH_EXPORT extern "C" __attribute__((visibility("default")))

typedef struct dispatch_object_s {
 private:
  dispatch_object_s();
  ~dispatch_object_s();
  dispatch_object_s(const dispatch_object_s&);
  void operator=(const dispatch_object_s&);
}* dispatch_object_t;

#define DISPATCH_DECL(name) \
  typedef struct name##_s : public dispatch_object_s {}* name##_t
#define DISPATCH_DECL_SUBCLASS(name, base) \
  typedef struct name##_s : public base##_s {}* name##_t

DISPATCH_DECL(dispatch_queue);
DISPATCH_DECL_SUBCLASS(dispatch_queue_global, dispatch_queue);
DISPATCH_DECL_SUBCLASS(dispatch_queue_serial, dispatch_queue);
DISPATCH_DECL_SUBCLASS(dispatch_queue_main, dispatch_queue_serial);
DISPATCH_DECL_SUBCLASS(dispatch_queue_concurrent, dispatch_queue);
DISPATCH_DECL(dispatch_queue_attr);
DISPATCH_DECL(dispatch_group);
DISPATCH_DECL(dispatch_semaphore);
DISPATCH_DECL(dispatch_data);

typedef void (^dispatch_block_t)(void);
typedef void (*dispatch_function_t)(void*);

// time.h
typedef uint64_t dispatch_time_t;
#define DISPATCH_TIME_NOW (0ull)
#define DISPATCH_TIME_FOREVER (~0ull)
#define NSEC_PER_SEC 1000000000ull
#define NSEC_PER_MSEC 1000000ull
#define USEC_PER_SEC 1000000ull
#define NSEC_PER_USEC 1000ull
DISPATCH_EXPORT dispatch_time_t dispatch_time(dispatch_time_t when, int64_t delta);

// object.h
DISPATCH_EXPORT void dispatch_retain(dispatch_object_t object);
DISPATCH_EXPORT void dispatch_release(dispatch_object_t object);

// queue.h
#define DISPATCH_QUEUE_SERIAL nullptr
DISPATCH_EXPORT struct dispatch_queue_attr_s _dispatch_queue_attr_concurrent;
#define DISPATCH_QUEUE_CONCURRENT (&_dispatch_queue_attr_concurrent)
#define DISPATCH_QUEUE_PRIORITY_HIGH 2
#define DISPATCH_QUEUE_PRIORITY_DEFAULT 0
#define DISPATCH_QUEUE_PRIORITY_LOW (-2)
#define DISPATCH_QUEUE_PRIORITY_BACKGROUND INT16_MIN

DISPATCH_EXPORT dispatch_queue_t dispatch_queue_create(const char* label, dispatch_queue_attr_t attr);
DISPATCH_EXPORT dispatch_queue_global_t dispatch_get_global_queue(intptr_t identifier, uintptr_t flags);
// Apple defines this inline (returning &_dispatch_main_q); same type here.
DISPATCH_EXPORT dispatch_queue_main_t dispatch_get_main_queue(void);
DISPATCH_EXPORT void dispatch_async(dispatch_queue_t queue, dispatch_block_t block);
DISPATCH_EXPORT void dispatch_async_f(dispatch_queue_t queue, void* context, dispatch_function_t work);
DISPATCH_EXPORT void dispatch_sync(dispatch_queue_t queue, dispatch_block_t block);
DISPATCH_EXPORT void dispatch_sync_f(dispatch_queue_t queue, void* context, dispatch_function_t work);
DISPATCH_EXPORT const char* dispatch_queue_get_label(dispatch_queue_t queue);

// group.h
DISPATCH_EXPORT dispatch_group_t dispatch_group_create(void);
DISPATCH_EXPORT void dispatch_group_async(dispatch_group_t group, dispatch_queue_t queue, dispatch_block_t block);
DISPATCH_EXPORT intptr_t dispatch_group_wait(dispatch_group_t group, dispatch_time_t timeout);
DISPATCH_EXPORT void dispatch_group_notify(dispatch_group_t group, dispatch_queue_t queue, dispatch_block_t block);

// semaphore.h
DISPATCH_EXPORT dispatch_semaphore_t dispatch_semaphore_create(intptr_t value);
DISPATCH_EXPORT intptr_t dispatch_semaphore_wait(dispatch_semaphore_t dsema, dispatch_time_t timeout);
DISPATCH_EXPORT intptr_t dispatch_semaphore_signal(dispatch_semaphore_t dsema);

// data.h
#define DISPATCH_DATA_DESTRUCTOR_DEFAULT nullptr
DISPATCH_EXPORT const dispatch_block_t _dispatch_data_destructor_free;
#define DISPATCH_DATA_DESTRUCTOR_FREE (_dispatch_data_destructor_free)
DISPATCH_EXPORT dispatch_data_t dispatch_data_create(const void* buffer, size_t size, dispatch_queue_t queue,
                                                     dispatch_block_t destructor);
DISPATCH_EXPORT size_t dispatch_data_get_size(dispatch_data_t data);
