#!/usr/bin/env bash
# Coverage-guided fuzzing of the parsers of untrusted input with libFuzzer (from the
# Swift toolchain), under AddressSanitizer.
# Usage: scripts/fuzz.sh [TARGET...]   (default: every target; FUZZ_SECONDS per target, default 60)
# Each target starts from Fuzz/corpus/TARGET (read-only) and grows a working corpus in
# .build-fuzz/corpus/TARGET. A crash, a hang (-timeout) or a memory blow-up (-rss_limit_mb)
# is saved in Fuzz/regressions/TARGET/, where `make test` replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config multistatus json-index html-index plugin-message)

swift build -c release --product ferry-fuzz --scratch-path .build-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING
binary=.build-fuzz/release/ferry-fuzz

status=0
for target in "${targets[@]}"; do
  [ -d "Fuzz/corpus/$target" ] || { echo "fuzz: no corpus for '$target' in Fuzz/corpus" >&2; exit 2; }
  mkdir -p ".build-fuzz/corpus/$target" "Fuzz/regressions/$target"
  echo "fuzz: $target for ${seconds}s" >&2
  if ! FERRY_FUZZ_TARGET=$target LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp" "$binary" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="Fuzz/regressions/$target/" \
        ".build-fuzz/corpus/$target" "Fuzz/corpus/$target"; then
    echo "fuzz: $target found a problem; the input is in Fuzz/regressions/$target/ (replay: swift run ferry-fuzz $target FILE)" >&2
    status=1
  fi
done
exit $status
