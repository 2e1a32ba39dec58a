#!/usr/bin/env bash
# Builds the tests once, then runs each test target in its own process, one after the other.
# Why: Swift's cooperative thread pool has one thread per core (two here). In one process the face engine's
# CPU-bound tests and the SDK's exit tests would starve the HTTP servers of the loopback tests, which then
# time out. Separate processes keep each suite's timing honest; within a process the tests run one at a time
# (--no-parallel), which on two cores is also faster (the authority suite: 24 s serial, 74 s parallel) and keeps
# CPU-heavy set-up (RSA key generation, ML-DSA) from starving other tests' loopback servers. Then a short run of
# every fuzz target (scripts/fuzz.sh). Prints one closing line for the whole run.
set -uo pipefail
swift="${SWIFT:-swift}"
"$swift" build --build-tests "$@" || exit 1

# Each entry is one process: the filter (and skip) arguments of one test target. The SDK's impossible-transition
# checks spawn ~1,000 child processes; they run apart from its loopback scenarios.
runs=(
  "--filter ^FaceSealCryptoTests\\."
  "--filter ^FaceSealWireTests\\."
  "--filter ^FaceSealHTTPTests\\."
  "--filter ^FaceSealFaceTests\\."
  "--filter ^FaceSealAuthorityTests\\."
  "--filter ^FaceSealSDKTests\\. --skip impossibleTransitionTraps"
  "--filter ^FaceSealSDKTests\\..*impossibleTransitionTraps"
  "--filter ^FaceSealRelyingPartyTests\\."
  "--filter ^FaceSealCLITests\\."
)
passed=0 failed=0 status=0
for run in "${runs[@]}"; do
  read -r -a selection <<<"$run"
  echo "== swift test $run"
  log="$(mktemp)"
  "$swift" test --skip-build --no-parallel "$@" "${selection[@]}" 2>&1 | tee "$log"
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
    echo "== swift test $run FAILED (exit $rc)"
  fi
  rm -f "$log"
done
# A short run of every fuzz target (FUZZ_SECONDS each): the parsers still take hostile bytes without a crash.
echo "== fuzz smoke"
if FUZZ_SECONDS="${FUZZ_SECONDS:-3}" SWIFT="$swift" bash "$(dirname "$0")/fuzz.sh"; then
  passed=$((passed + 1))
else
  status=1
  failed=$((failed + 1))
  echo "== fuzz smoke FAILED"
fi
echo "tests: $passed passed, $failed failed"
exit $status
