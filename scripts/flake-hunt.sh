#!/usr/bin/env bash
# Runs the whole test suite N times from a fresh clone and reports each run, to show that
# no test depends on timing.
#
#   scripts/flake-hunt.sh N [--load K]
#
# FLAKE_HUNT_CLONE=DIR reuses a clone an earlier hunt left there (fast-forwarded to this
# checkout's HEAD, built incrementally: the dependencies' build is kept), and keeps it.
#
# The clone is built once (as `make test` builds it: warnings are errors), then the suite
# runs N times in a row. --load K runs K busy-loop processes (one core each) beside the
# runs with an odd number, so that half the runs happen on a machine with no core to spare.
# Writes a Markdown table to bench-results/flake-hunt.md and exits non-zero if any run failed.
set -euo pipefail

runs=${1:?usage: scripts/flake-hunt.sh N [--load K]}
load=0
if [ "${2:-}" = "--load" ]; then load=${3:?--load needs a number of busy processes}; fi

top=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${FLAKE_HUNT_CLONE:-}" ]; then
  work=$FLAKE_HUNT_CLONE
  keep=1
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/ferry-flake-hunt-XXXXXX")
  keep=0
fi
hogs=()
cleanup() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

if [ "$keep" = 1 ] && [ -d "$work/ferry/.git" ]; then
  git -C "$work/ferry" pull -q --ff-only "$top" "$(git -C "$top" rev-parse --abbrev-ref HEAD)"
else
  git clone -q "$top" "$work/ferry"
fi
cd "$work/ferry"
echo "flake-hunt: building a fresh clone of $(git rev-parse --short HEAD)" >&2
build_started=$(date +%s)
make test-deps >/dev/null
swift build --build-tests >"$work/build.log" 2>&1 || { tail -20 "$work/build.log"; exit 1; }
bash scripts/check-warnings.sh "$work/build.log"
build_seconds=$(( $(date +%s) - build_started ))

mkdir -p "$top/bench-results"
table="$top/bench-results/flake-hunt.md"
{
  echo "| run | beside | result | tests | failed tests | seconds | load (1 min) |"
  echo "|---:|---|---|---:|---|---:|---:|"
} >"$table"

failures=0
for run in $(seq 1 "$runs"); do
  beside="nothing"
  if [ "$load" -gt 0 ] && [ $((run % 2)) -eq 1 ]; then
    for _ in $(seq 1 "$load"); do
      (while :; do :; done) &
      hogs+=($!)
    done
    beside="$load busy loops"
  fi
  started=$(date +%s)
  log="$work/run-$run.log"
  # The whole of `make test`: the Swift suites and the control API's (pytest, a browser).
  if bash scripts/run-tests.sh >"$log" 2>&1; then
    result=pass
  else
    result=FAIL; failures=$((failures + 1))
  fi
  seconds=$(( $(date +%s) - started ))
  loadavg=$(cut -d' ' -f1 /proc/loadavg)
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  hogs=()
  swift_count=$(grep -oE 'Test run with [0-9]+ tests' "$log" | grep -oE '[0-9]+' | tail -1 || true)
  python_count=$(grep -oE '^[0-9]+ passed' "$log" | grep -oE '[0-9]+' | tail -1 || true)
  count=$(( ${swift_count:-0} + ${python_count:-0} ))
  failed=$( { grep -E '^✘ Test "' "$log" | sed -E 's/^✘ Test "([^"]*)".*/\1/'; grep -E '^FAILED ' "$log" | cut -d' ' -f2; } \
           | sort -u | head -5 | paste -sd ';' - || true)
  echo "| $run | $beside | $result | ${count:-?} | ${failed:-} | $seconds | $loadavg |" >>"$table"
  echo "flake-hunt: run $run/$runs ($beside): $result in ${seconds}s${failed:+ — $failed}" >&2
  [ "$result" = pass ] || cp "$log" "$top/bench-results/flake-hunt-run-$run.log"
done

echo "build: ${build_seconds}s" >>"$table"
cat "$table"
echo "$((runs - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
