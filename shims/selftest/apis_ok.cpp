// Self-test for the Linux Metal type-check lane: a TU that MUST type-check.
// It includes all of metal-cpp (Foundation, Metal, QuartzCore) with the
// private-implementation macros and touches every shimmed Apple API, so a
// missing or wrong shim declaration shows up here even if MLX does not use it.
// Written for this lane; it is never compiled into anything.

#define NS_PRIVATE_IMPLEMENTATION
#define MTL_PRIVATE_IMPLEMENTATION
#define CA_PRIVATE_IMPLEMENTATION

#include <Foundation/Foundation.hpp>
#include <Metal/Metal.hpp>
#include <QuartzCore/QuartzCore.hpp>

#include <TargetConditionals.h>
#include <dispatch/dispatch.h>
#include <mach/mach.h>
#include <mach/vm_page_size.h>
#include <sys/sysctl.h>

#include <cstdint>
#include <type_traits>

static_assert(TARGET_OS_OSX == 1 && TARGET_OS_IPHONE == 0, "macOS target");
static_assert(std::is_same_v<NS::UInteger, unsigned long>, "NSUInteger is unsigned long");
static_assert(std::is_same_v<CGFloat, double>, "CGFloat is double on 64-bit");
static_assert(std::is_same_v<BOOL, bool>, "BOOL is bool on arm64");
static_assert(sizeof(CGSize) == 16 && sizeof(CFTimeInterval) == 8, "CG/CF sizes");
static_assert(sizeof(vm_size_t) == 8 && sizeof(task_id_token_t) == 4, "mach sizes");

int exercise_shims(MTL::Device* device, CA::MetalLayer* layer, MTL::Texture* texture,
                   dispatch_data_t data, IOSurfaceRef surface) {
  NS::SharedPtr<NS::AutoreleasePool> pool = NS::TransferPtr(NS::AutoreleasePool::alloc()->init());

  // objc_msgSend_stret (struct > 16 bytes on x86_64) and objc_msgSend_fpret paths.
  MTL::Size max_tg = device->maxThreadsPerThreadgroup();
  NS::SharedPtr<MTL::SamplerDescriptor> sd = NS::TransferPtr(MTL::SamplerDescriptor::alloc()->init());
  float lod = sd->lodMinClamp();

  // Blocks (-fblocks) and std::function overloads.
  MTL::Buffer* buf = device->newBuffer(nullptr, 4096, MTL::ResourceStorageModeShared,
                                       ^(void*, NS::UInteger) {});
  MTL::CommandQueue* queue = device->newCommandQueue();
  MTL::CommandBuffer* cb = queue->commandBuffer();
  cb->addCompletedHandler([](MTL::CommandBuffer* c) { (void)c->GPUStartTime(); });
  CFTimeInterval t = cb->GPUEndTime() - cb->kernelStartTime();

  // dispatch
  dispatch_queue_t dq = dispatch_queue_create("mlx.typecheck", DISPATCH_QUEUE_SERIAL);
  NS::SharedPtr<MTL::SharedEventListener> listener =
      NS::TransferPtr(MTL::SharedEventListener::alloc()->init(dq));
  MTL::SharedEvent* ev = device->newSharedEvent();
  ev->notifyListener(listener.get(), 1, ^(MTL::SharedEvent*, uint64_t) {});
  dispatch_async(dispatch_get_main_queue(), ^{});
  dispatch_release(dq);
  NS::Error* error = nullptr;
  MTL::Library* lib = device->newLibrary(data, &error);

  // mach / IOSurface / CoreGraphics / sysctl
  kern_return_t kr = buf->setOwner(task_id_token_t{0});
  IOSurfaceRef s = texture->iosurface();
  MTL::Texture* t2 = device->newTexture(nullptr, surface, 0);
  layer->setDrawableSize(CGSizeMake(640.0, 480.0));
  CGSize ds = layer->drawableSize();
  CGColorSpaceRef cs = CGColorSpaceCreateWithName(kCGColorSpaceSRGB);
  layer->setColorspace(cs);
  CGColorSpaceRelease(cs);
  size_t memsize = 0, len = sizeof(memsize);
  sysctlbyname("hw.memsize", &memsize, &len, nullptr, 0);
  vm_size_t page = vm_page_size;

  return static_cast<int>(max_tg.width + lod + t + kr + page + ds.width + memsize) +
         (s != nullptr) + (lib != nullptr) + (t2 != nullptr);
}
