import { describe, expect, it } from 'vitest';

import { missingTwinCalls } from '../../src/suite/twin.js';

// Each line as the compiler prints it (g++ 12 and clang 19 on Debian 12).
describe('missingTwinCalls', () => {
  it("finds a member a twin class lacks in g++'s message with ASCII quotes (C locale)", () => {
    expect(
      missingTwinCalls([
        "metal.cpp:2:32: error: 'struct MTL::Buffer' has no member named 'gpuAddress'",
        "metal.cpp:3:9: error: 'class NS::String' has no member named 'utf8String'",
      ]),
    ).toEqual(['MTL::Buffer::gpuAddress', 'NS::String::utf8String']);
  });

  it("finds the same member in g++'s message with Unicode quotes (a UTF-8 locale such as C.UTF-8)", () => {
    expect(missingTwinCalls(['metal.cpp:2:32: error: ‘struct MTL::Buffer’ has no member named ‘gpuAddress’'])).toEqual([
      'MTL::Buffer::gpuAddress',
    ]);
  });

  it("finds a member a twin class lacks in clang's message", () => {
    expect(missingTwinCalls(["metal.cpp:2:32: error: no member named 'gpuAddress' in 'MTL::Buffer'"])).toEqual([
      'MTL::Buffer::gpuAddress',
    ]);
  });

  it('finds a name the MTL or NS namespace lacks, in both of g++\'s quote styles ("is not a member of") and in clang\'s', () => {
    expect(
      missingTwinCalls([
        "metal.cpp:3:21: error: 'SharedEvent' is not a member of 'MTL'",
        'metal.cpp:4:21: error: ‘Heap’ is not a member of ‘MTL’',
        'metal.cpp:5:30: error: ‘String’ is not a member of ‘NS’',
        "metal.cpp:6:21: error: no type named 'Device' in namespace 'MTL'",
        "metal.cpp:7:21: error: no member named 'CopyAllDevices' in namespace 'MTL'",
      ]),
    ).toEqual(['MTL::SharedEvent', 'MTL::Heap', 'NS::String', 'MTL::Device', 'MTL::CopyAllDevices']);
  });

  it('finds a static member a twin class lacks ("is not a member of \'MTL::Buffer\'"), in both quote styles', () => {
    expect(
      missingTwinCalls([
        "metal.cpp:2:29: error: 'alloc' is not a member of 'MTL::Buffer'",
        'metal.cpp:3:29: error: ‘init’ is not a member of ‘MTL::Buffer’',
      ]),
    ).toEqual(['MTL::Buffer::alloc', 'MTL::Buffer::init']);
  });

  it('names each call once, and ignores errors about anything but MTL:: and NS::', () => {
    expect(
      missingTwinCalls([
        "a.cpp:1:1: error: 'struct MTL::Buffer' has no member named 'gpuAddress'",
        "b.cpp:9:1: error: no member named 'gpuAddress' in 'MTL::Buffer'",
        "c.cpp:1:1: error: 'class std::vector<int>' has no member named 'gpuAddress'",
        'c.cpp:2:1: error: ‘Foo’ is not a member of ‘std’',
        "c.cpp:3:1: error: 'MTLX' has not been declared",
      ]),
    ).toEqual(['MTL::Buffer::gpuAddress']);
  });
});
