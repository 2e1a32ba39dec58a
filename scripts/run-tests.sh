#!/usr/bin/env bash
# Builds the tests once, then runs each test target in its own process, one after the other.
# Why: Swift's cooperative thread pool has one thread per core (two here). In one process the face engine's
# CPU-bound tests and the SDK's exit tests would starve the HTTP servers of the loopback tests, which then
# time out. Separate processes keep each suite's timing honest. Prints one closing line for the whole run.
set -uo pipefail
swift="${SWIFT:-swift}"
"$swift" build --build-tests "$@" || exit 1

targets=(FaceSealCryptoTests FaceSealWireTests FaceSealHTTPTests FaceSealFaceTests
         FaceSealAuthorityTests FaceSealSDKTests FaceSealRelyingPartyTests)
passed=0 failed=0 status=0
for target in "${targets[@]}"; do
  echo "== $target"
  log="$(mktemp)"
  "$swift" test --skip-build "$@" --filter "^${target}\\." 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  # Swift Testing's closing line: "Test run with N tests in M suites passed|failed …".
  n=$(sed -n 's/.*Test run with \([0-9][0-9]*\) tests\{0,1\} in .* passed.*/\1/p' "$log" | tail -1)
  if [ "$rc" -eq 0 ] && [ -n "$n" ]; then
    passed=$((passed + n))
  else
    status=1
    f=$(grep -c '✘ Test .* failed after' "$log")
    [ "$f" -gt 0 ] || f=1
    failed=$((failed + f))
    echo "== $target FAILED (exit $rc)"
  fi
  rm -f "$log"
done
echo "tests: $passed passed, $failed failed"
exit $status
