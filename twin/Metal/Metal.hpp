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
//
// Keep it this small. When the PR's Metal code calls anything else, the twin
// build fails with an error naming that call: add it here only when the
// allocator layout above makes it faithful.

#pragma once

#include <cstddef>

namespace NS {

using UInteger = unsigned long;

} // namespace NS

namespace MTL {

class Device {};

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
};

} // namespace MTL
