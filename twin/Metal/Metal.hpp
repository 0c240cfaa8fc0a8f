// Host twin of the few metal-cpp calls the PR's Metal code makes, for running
// its Metal-only tests on a Linux CPU build of MLX. It is not metal-cpp: the
// Metal type-check lane (check-metal) checks the real metal-cpp API.
//
// Why this is faithful. On a CPU build, MLX's allocator
// (mlx/backend/no_gpu/allocator.cpp, CommonAllocator::malloc) allocates every
// buffer as one block [size_t length][bytes], stores the requested size in the
// first word, and allocator::Buffer::ptr() returns the start of the block,
// while Buffer::raw_ptr() returns the bytes after the length. The Metal
// backend's Buffer::ptr() is an MTL::Buffer* instead. So the same cast
// `static_cast<MTL::Buffer*>(buffer.ptr())` gives a twin buffer whose:
//   - length()   reads the stored size, like MTL::Buffer::length() (a reused
//                cache buffer can be longer than the array, as on Metal);
//   - contents() returns the bytes after it, the same pointer as raw_ptr(),
//                like MTL::Buffer::contents();
//   - device()   returns one host device, like MTL::Buffer::device() on a
//                machine with one GPU.
// A blit reads through the same layout: Device::newBuffer() allocates a block
// [size_t length][bytes] that release() frees, and a command buffer runs its
// buffer copies when it is committed, in order, as one Metal queue does.
//
// Keep it this small. When the PR's Metal code calls anything else, the twin
// build fails with an error naming that call: add it here only when the
// allocator layout above makes it faithful.

#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace NS {

using UInteger = unsigned long;

class AutoreleasePool {
 public:
  static AutoreleasePool* alloc() {
    return new AutoreleasePool;
  }
  AutoreleasePool* init() {
    return this;
  }
  void release() {
    delete this;
  }
};

} // namespace NS

namespace MTL {

enum ResourceOptions : NS::UInteger {
  ResourceStorageModeShared = 0,
};

enum CommandBufferStatus : NS::UInteger {
  CommandBufferStatusNotEnqueued = 0,
  CommandBufferStatusCompleted = 4,
};

class Buffer;
class CommandQueue;

class Device {
 public:
  CommandQueue* newCommandQueue();
  Buffer* newBuffer(NS::UInteger length, ResourceOptions options);
};

class Buffer {
 public:
  Buffer() = delete;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  NS::UInteger length() const {
    return *reinterpret_cast<const std::size_t*>(this);
  }

  void* contents() {
    return reinterpret_cast<std::size_t*>(this) + 1;
  }

  Device* device() const {
    static Device host;
    return &host;
  }

  // Only for buffers made by Device::newBuffer().
  void release() {
    std::free(this);
  }
};

class BlitCommandEncoder {
 public:
  void copyFromBuffer(
      const Buffer* sourceBuffer,
      NS::UInteger sourceOffset,
      const Buffer* destinationBuffer,
      NS::UInteger destinationOffset,
      NS::UInteger size) {
    auto from = const_cast<Buffer*>(sourceBuffer);
    auto to = const_cast<Buffer*>(destinationBuffer);
    copies_.push_back([=] {
      std::memcpy(
          static_cast<char*>(to->contents()) + destinationOffset,
          static_cast<char*>(from->contents()) + sourceOffset,
          size);
    });
  }
  void endEncoding() {}

 private:
  friend class CommandBuffer;
  std::vector<std::function<void()>> copies_;
};

class CommandBuffer {
 public:
  BlitCommandEncoder* blitCommandEncoder() {
    return &encoder_;
  }
  void commit() {
    for (auto& copy : encoder_.copies_) {
      copy();
    }
    status_ = CommandBufferStatusCompleted;
  }
  void waitUntilCompleted() {}
  CommandBufferStatus status() const {
    return status_;
  }

 private:
  BlitCommandEncoder encoder_;
  CommandBufferStatus status_{CommandBufferStatusNotEnqueued};
};

// Owns the one command buffer it hands out; Metal autoreleases it instead.
class CommandQueue {
 public:
  CommandBuffer* commandBuffer() {
    return &buffer_;
  }
  void release() {
    delete this;
  }

 private:
  CommandBuffer buffer_;
};

inline CommandQueue* Device::newCommandQueue() {
  return new CommandQueue;
}

inline Buffer* Device::newBuffer(NS::UInteger length, ResourceOptions) {
  auto block = static_cast<std::size_t*>(std::malloc(sizeof(std::size_t) + length));
  *block = length;
  return reinterpret_cast<Buffer*>(block);
}

} // namespace MTL
