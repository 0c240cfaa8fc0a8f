// Self-test for the Linux Metal type-check lane: a TU that MUST FAIL.
// Each line marked "expected-error" misuses the metal-cpp API. The self-test
// checks (1) that a normal run fails and (2) that a run with
// `-Xclang -verify -Xclang -verify-ignore-unexpected=note` passes, i.e. it fails
// for exactly these reasons and not because a shim header is missing.
// Written for this lane; it is never compiled into anything.

#include <Metal/Metal.hpp>

#include <string>

void misuse_metal_cpp(MTL::Device* device, MTL::ComputeCommandEncoder* enc) {
  MTL::Buffer* buf = device->newBuffer(256, MTL::ResourceStorageModeShared);

  // Non-existent member.
  void* p = buf->contentsPointer(); // expected-error {{no member named 'contentsPointer' in 'MTL::Buffer'}}

  // Wrong argument types: a string where a length is expected.
  device->newBuffer("256", MTL::ResourceStorageModeShared); // expected-error {{no matching member function for call to 'newBuffer'}}

  // Missing argument (setBuffer needs buffer, offset, index).
  enc->setBuffer(buf, 0); // expected-error {{no matching member function for call to 'setBuffer'}}

  // NS::String* is not a std::string.
  std::string name = device->name(); // expected-error {{no viable conversion from 'NS::String *' to 'std::string'}}

  (void)p;
}
