#!/usr/bin/env bash
# Metal type-check lane on Linux: `clang++ -fsyntax-only -fblocks` (clang 19 +
# libc++) over MLX Metal-backend C++ TUs, using Apple's metal-cpp headers and the
# Apple system-header shims in shims/include. See shims/README.md.
#
# Usage:
#   scripts/metal-typecheck.sh --mlx <mlx checkout> --metal-cpp <metal-cpp dir>
#       [--out <log dir>] [--jobs N] [--fmt-include <dir>] [-D<macro>[=v]]...
#       file.cpp...
#   scripts/metal-typecheck.sh --self-test --mlx <mlx checkout> --metal-cpp <dir>
#       [--out <log dir>] [--jobs N]
#
# Relative file.cpp paths are resolved against the current directory first,
# then against the MLX checkout. Prints one line per TU ("ok" / "FAIL" + first
# errors), a summary line, and exits 0 if all TUs pass, 1 if any fails, 2 on
# usage errors. The exact clang command line is printed once ("cmd: ...").
#
# --self-test type-checks every mlx/backend/metal/*.cpp of the checkout, a few
# define variants of device.cpp / jit_kernels.cpp, shims/selftest/apis_ok.cpp
# (must pass), and shims/selftest/broken.cpp (must FAIL, and must fail for
# exactly the reasons annotated in it, checked with clang -verify).
#
# Env: CLANGXX (default clang++-19).

set -u -o pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
SHIMS="$ROOT/shims/include"
SELFTEST_DIR="$ROOT/shims/selftest"
CLANGXX="${CLANGXX:-clang++-19}"

usage() {
  sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

MLX="" METAL_CPP="" OUT="" JOBS=1 FMT_INCLUDE="" SELF_TEST=0
EXTRA_DEFS=()
FILES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mlx) MLX="${2:-}"; shift 2 ;;
    --metal-cpp) METAL_CPP="${2:-}"; shift 2 ;;
    --out) OUT="${2:-}"; shift 2 ;;
    --jobs|-j) JOBS="${2:-}"; shift 2 ;;
    --fmt-include) FMT_INCLUDE="${2:-}"; shift 2 ;;
    --self-test) SELF_TEST=1; shift ;;
    -D?*) EXTRA_DEFS+=("$1"); shift ;;
    -h|--help) usage ;;
    --) shift; FILES+=("$@"); break ;;
    -*) echo "metal-typecheck: unknown option: $1" >&2; usage ;;
    *) FILES+=("$1"); shift ;;
  esac
done

die() { echo "metal-typecheck: $*" >&2; exit 2; }
[ -n "$MLX" ] || die "--mlx <mlx checkout> is required"
[ -n "$METAL_CPP" ] || die "--metal-cpp <metal-cpp dir> is required"
[ -d "$MLX/mlx/backend/metal" ] || die "not an MLX checkout: $MLX"
[ -f "$METAL_CPP/Metal/Metal.hpp" ] || die "not a metal-cpp dir (no Metal/Metal.hpp): $METAL_CPP"
[ -d "$SHIMS" ] || die "shim headers not found: $SHIMS"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a positive integer"
command -v "$CLANGXX" >/dev/null 2>&1 || die "compiler not found: $CLANGXX (set CLANGXX)"
MLX="$(cd "$MLX" && pwd)"
METAL_CPP="$(cd "$METAL_CPP" && pwd)"
if [ $SELF_TEST -eq 0 ] && [ ${#FILES[@]} -eq 0 ]; then die "no input files"; fi
resolve() {
  local f="$1"
  if [ -f "$f" ]; then (cd "$(dirname "$f")" && echo "$(pwd)/$(basename "$f")")
  elif [ -f "$MLX/$f" ]; then echo "$MLX/$f"
  else echo ""; fi
}

RESOLVED=()
for f in "${FILES[@]}"; do
  p="$(resolve "$f")"
  [ -n "$p" ] || die "file not found: $f"
  RESOLVED+=("$p")
done
OUT="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/metal-typecheck.XXXXXX")}"
mkdir -p "$OUT" || die "cannot create $OUT"
OUT="$(cd "$OUT" && pwd)"

# The lane's flags. Mirrors what MLX's CMake passes to the Metal TUs
# (C++20, MLX_STATIC, fmt header-only, METAL_PATH, the checkout root and the
# metal-cpp root on the include path); the shims stand in for the macOS SDK.
FLAGS=(
  -std=c++20 -stdlib=libc++ -fsyntax-only -fblocks
  -DMLX_STATIC -DFMT_HEADER_ONLY '-DMETAL_PATH="/usr/local/lib/mlx.metallib"'
  -I "$MLX" -I "$METAL_CPP" -isystem "$SHIMS"
)
[ -n "$FMT_INCLUDE" ] && FLAGS+=(-isystem "$FMT_INCLUDE")
FLAGS+=("${EXTRA_DEFS[@]}")

printf 'cmd:'
printf ' %q' "$CLANGXX" "${FLAGS[@]}"
printf ' <file.cpp>\n'
echo "logs: $OUT"

# Job table: label | must (pass|fail|verify) | file | extra flags (space-separated)
LABELS=() MUSTS=() PATHS=() XFLAGS=()
add_job() { LABELS+=("$1"); MUSTS+=("$2"); PATHS+=("$3"); XFLAGS+=("${4:-}"); }

if [ $SELF_TEST -eq 1 ]; then
  shopt -s nullglob
  mlx_tus=("$MLX"/mlx/backend/metal/*.cpp)
  shopt -u nullglob
  [ ${#mlx_tus[@]} -gt 0 ] || die "no mlx/backend/metal/*.cpp in $MLX"
  for f in "${mlx_tus[@]}"; do add_job "${f#"$MLX"/}" pass "$f"; done
  # Define variants MLX's CMake can produce (NAX kernels off with JIT on older
  # SDKs; the macOS-26-SDK branch of metal-cpp's private implementation).
  d="$MLX/mlx/backend/metal"
  [ -f "$d/device.cpp" ] && add_job "mlx/backend/metal/device.cpp [-D__MAC_26_0=260000]" pass "$d/device.cpp" "-D__MAC_26_0=260000"
  [ -f "$d/device.cpp" ] && add_job "mlx/backend/metal/device.cpp [-DMLX_METAL_NO_NAX]" pass "$d/device.cpp" "-DMLX_METAL_NO_NAX"
  [ -f "$d/jit_kernels.cpp" ] && add_job "mlx/backend/metal/jit_kernels.cpp [-DMLX_METAL_NO_NAX]" pass "$d/jit_kernels.cpp" "-DMLX_METAL_NO_NAX"
  add_job "shims/selftest/apis_ok.cpp" pass "$SELFTEST_DIR/apis_ok.cpp"
  add_job "shims/selftest/broken.cpp" fail "$SELFTEST_DIR/broken.cpp"
  add_job "shims/selftest/broken.cpp [-verify]" verify "$SELFTEST_DIR/broken.cpp" \
    "-Xclang -verify -Xclang -verify-ignore-unexpected=note"
fi
for i in "${!FILES[@]}"; do add_job "${FILES[$i]}" pass "${RESOLVED[$i]}"; done

run_one() { # index
  local i="$1" log="$OUT/$1.log" start end xf=()
  read -r -a xf <<<"${XFLAGS[$i]}"
  start=$(date +%s.%N)
  "$CLANGXX" "${FLAGS[@]}" "${xf[@]}" "${PATHS[$i]}" >"$log" 2>&1
  echo $? >"$OUT/$i.rc"
  end=$(date +%s.%N)
  echo "$start $end" | awk '{printf "%.1f\n", $2 - $1}' >"$OUT/$i.time"
}

T0=$(date +%s.%N)
running=0
for i in "${!LABELS[@]}"; do
  run_one "$i" &
  running=$((running + 1))
  if [ $running -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait
T1=$(date +%s.%N)

n_ok=0 n_fail=0 mlx_total=0 mlx_ok=0
for i in "${!LABELS[@]}"; do
  rc="$(cat "$OUT/$i.rc" 2>/dev/null || echo 99)"
  t="$(cat "$OUT/$i.time" 2>/dev/null || echo '?')"
  label="${LABELS[$i]}" must="${MUSTS[$i]}" log="$OUT/$i.log"
  cp "$log" "$OUT/$(echo "$label" | tr -c 'A-Za-z0-9._=-' '_').log" 2>/dev/null
  case "$must" in
    pass|verify) good=$([ "$rc" -eq 0 ] && echo 1 || echo 0) ;;
    fail) good=$([ "$rc" -ne 0 ] && echo 1 || echo 0) ;;
  esac
  if [[ "$label" == mlx/backend/metal/*.cpp ]]; then
    mlx_total=$((mlx_total + 1)); [ "$good" = 1 ] && [ "$rc" -eq 0 ] && mlx_ok=$((mlx_ok + 1))
  fi
  if [ "$must" = fail ]; then
    if [ "$good" = 1 ]; then
      echo "ok   $label (failed as expected: $(grep -c ' error: ' "$log") errors) ${t}s"
      n_ok=$((n_ok + 1))
    else
      echo "FAIL $label (expected errors, but it type-checked) ${t}s"
      n_fail=$((n_fail + 1))
    fi
  elif [ "$good" = 1 ]; then
    echo "ok   $label ${t}s"
    n_ok=$((n_ok + 1))
  else
    echo "FAIL $label ${t}s"
    { grep -E '(error|fatal error): ' "$log" || tail -n 3 "$log"; } | head -n 5 | sed 's/^/       /'
    n_fail=$((n_fail + 1))
  fi
  rm -f "$OUT/$i.log" "$OUT/$i.rc" "$OUT/$i.time"
done

total=$(echo "$T0 $T1" | awk '{printf "%.1f", $2 - $1}')
if [ $SELF_TEST -eq 1 ]; then
  echo "summary: self-test $([ $n_fail -eq 0 ] && echo PASSED || echo FAILED): MLX metal TUs ok $mlx_ok/$mlx_total; checks ok $n_ok, failed $n_fail; jobs $JOBS; wall ${total}s"
else
  echo "summary: $n_ok ok, $n_fail failed; jobs $JOBS; wall ${total}s"
fi
[ $n_fail -eq 0 ]
