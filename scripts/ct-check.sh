#!/usr/bin/env bash
# Constant-time check of FaceSeal's vector kernels (Sources/CFaceSealPQ) under valgrind memcheck:
# inputs marked secret, any secret-dependent branch or memory index fails the run. The portable Swift
# path and the Swift around the kernels are covered by review (docs/ARCHITECTURE.md, "Post-quantum
# performance"). Needs clang (the Swift toolchain's) and valgrind (Debian package `valgrind`). Valgrind
# has no AVX-512: under it the CPU reports AVX2 at most, so the AVX-512VL build of the Keccak kernel
# (the same source, compiled for another target) is not run here.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "ct-check: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
${CC:-clang} -O2 -gdwarf-4 -ISources/CFaceSealPQ/include Sources/CFaceSealPQ/*.c scripts/ct/kernels-ct.c -o "$out/kernels-ct"
valgrind --quiet --error-exitcode=1 --track-origins=yes "$out/kernels-ct"
