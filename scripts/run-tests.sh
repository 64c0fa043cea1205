#!/usr/bin/env bash
# Runs the built test suite as four processes at once: the engine's unit tests, the
# backends' tests, the end-to-end tests, and the control API's (pytest against a daemon).
# Prints each line with its group's name, then one result line per group; exits non-zero
# if any group failed.
#
#   scripts/run-tests.sh [arguments for the test binary, given to every Swift group: --skip NAME]
#
# The control API's tests wait more than they compute (a daemon starting, a browser): alone
# after the Swift groups they took 49 s with the cores half idle; beside them their waits
# overlap the others' work. FERRY_TESTS_WITHOUT_CONTROL_API=1 leaves them out.
#
# Why three processes: Swift's cooperative pool has one thread per core (two here) in each
# process. In one process, the end-to-end tests' synchronous work (writing thousands of
# fixture files, waiting for a child) held both threads for minutes at a time, and an
# engine test waiting for its run to reach an upload gate waited up to 495 s for a turn
# (stack samples in the notes of issue 50). The kernel shares the cores between
# processes; nothing shares one process's pool with another's.
set -uo pipefail

swift=${SWIFT:-swift}
logs=.build/test-logs
mkdir -p "$logs"

groups=(engine backends end-to-end)
[ -n "${FERRY_TESTS_WITHOUT_CONTROL_API:-}" ] || groups+=(control-api)
declare -A arguments=(
  [engine]="--filter FerryCoreTests --filter FerryConfigTests --filter FerryDaemonTests --filter FerryJournalTests --filter FerryControlTests --filter ArchiveCodecTests"
  [backends]="--filter WebDAVBackendTests --filter HTTPBackendTests --filter S3BackendTests --filter ExecBackendTests --filter LocalBackendTests --filter FerryEncryptionTests --filter FerryFuzzingTests"
  [end-to-end]="--filter FerryIntegrationTests"
)

# Every Swift test target belongs to a group: one left out would never run.
for target in Tests/*/; do
  target=$(basename "$target")
  compgen -G "Tests/$target/*.swift" > /dev/null || continue
  [[ " ${arguments[*]} " == *" --filter $target "* || " ${arguments[*]} " == *" --filter $target" ]] \
    || { echo "run-tests.sh: the test target $target is in no group; add it to one" >&2; exit 2; }
done

# The test binary itself, not `swift test`: SwiftPM holds a lock on .build for as long as
# a `swift test` runs, so three of them would run one after the other.
tests="$("$swift" build --show-bin-path)/FerryPackageTests.xctest"
[ -x "$tests" ] || { echo "no test build at $tests: run swift build --build-tests first" >&2; exit 2; }

pids=()
for group in "${groups[@]}"; do
  if [ "$group" = control-api ]; then
    command=(python3 -m pytest -q -p no:cacheprovider Tests/control-api)
  else
    # shellcheck disable=SC2206 # the group's arguments are words
    command=(env NO_COLOR=1 "$tests" --testing-library swift-testing ${arguments[$group]} "$@")
  fi
  ( "${command[@]}" 2>&1 | tee "$logs/$group.log" | sed -u "s/^/[$group] /"
    echo "${PIPESTATUS[0]}" > "$logs/$group.status" ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done

# A group's result line, and the lines that name its failed tests (Swift Testing's or pytest's).
result_pattern() { [ "$1" = control-api ] && echo "[0-9]+ (passed|failed)" || echo "Test run with [0-9]+ tests"; }
ran_pattern() { [ "$1" = control-api ] && echo "[1-9][0-9]* passed" || echo "Test run with [1-9][0-9]* tests"; }
failure_pattern() { [ "$1" = control-api ] && echo "^(FAILED|ERROR) " || echo "^✘ "; }

failed=0
for group in "${groups[@]}"; do
  status=$(cat "$logs/$group.status" 2>/dev/null || echo 1)
  result=$(grep -aE "$(result_pattern "$group")" "$logs/$group.log" | tail -1)
  echo "$group: ${result:-no result line (exit $status)}"
  if [ "$status" != 0 ]; then
    failed=1
    grep -aE "$(failure_pattern "$group")" "$logs/$group.log" | grep -av "Test run with" | sed "s/^/  $group: /" | head -40
  fi
done
# Every group must have found tests: a filter that matches nothing passes silently.
for group in "${groups[@]}"; do
  grep -aqE "$(ran_pattern "$group")" "$logs/$group.log" || { echo "$group: no test ran"; failed=1; }
done
exit $failed
