import { describe, expect, it } from 'vitest';

import { downloadSources, proxyFor } from '../../src/suite/downloads.js';

const ROOT = `FetchContent_Declare(metal_cpp URL \${METAL_CPP_URL})
FetchContent_Declare(
  json
  URL https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz)
# FetchContent_Declare(x GIT_REPOSITORY https://example.invalid/commented.git)
  FetchContent_Declare(
    fmt
    GIT_REPOSITORY https://github.com/fmtlib/fmt.git
    GIT_TAG 12.1.0)
      URL "https://github.com/OpenMathLib/OpenBLAS/releases/download/v0.3.33/\${OPENBLAS_ZIP}"
`;

describe('download hosts of a CMake tree', () => {
  it('lists each host once with the first address and file that name it; skips variables and comments', () => {
    const sources = downloadSources([
      { path: 'CMakeLists.txt', text: ROOT },
      {
        path: 'tests/CMakeLists.txt',
        text: 'FetchContent_Declare(\n  doctest\n  GIT_REPOSITORY http://127.0.0.1:9/doctest.git\n  GIT_TAG v2.4.12)\n',
      },
    ]);
    expect(sources).toEqual([
      {
        url: 'https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz',
        host: 'github.com',
        port: 443,
        file: 'CMakeLists.txt',
        more: 1,
      },
      { url: 'http://127.0.0.1:9/doctest.git', host: '127.0.0.1', port: 9, file: 'tests/CMakeLists.txt', more: 0 },
    ]);
  });

  it('finds the proxy that carries a request, if the environment names one', () => {
    expect(proxyFor('https://github.com/x', { https_proxy: 'http://proxy.local:3128' })).toEqual({
      host: 'proxy.local',
      port: 3128,
    });
    expect(proxyFor('http://example.invalid/x', { HTTP_PROXY: 'proxy.local:8080' })).toEqual({
      host: 'proxy.local',
      port: 8080,
    });
    expect(proxyFor('https://github.com/x', {})).toBeNull();
  });
});
