#!/usr/bin/env bash
# Fails in one line when the disk is too full for the suite. Ferry refuses transfers that
# would leave less than 1% of a disk free (transfers.min_free_space), so below that every
# test that copies a file would fail with "not enough free space" instead of saying why.
# Needed: that 1% plus room for the debug build and the tests' own data.
# Usage: scripts/check-free-space.sh [EXTRA_GIB] (default 3)
set -euo pipefail
extra_gib="${1:-3}"
for folder in "$PWD" "${TMPDIR:-/tmp}"; do
  read -r size_kib free_kib < <(df -Pk "$folder" | awk 'NR == 2 { print $2, $4 }')
  need_kib=$(( size_kib / 100 + extra_gib * 1024 * 1024 ))
  if [ "$free_kib" -lt "$need_kib" ]; then
    awk -v folder="$folder" -v free="$free_kib" -v need="$need_kib" -v extra="$extra_gib" 'BEGIN {
      printf "check-free-space: %s has %.1f GiB free; the tests need %.1f GiB (1%% of the disk that ferry keeps free, plus %s GiB for the build and test data): free some space and run again\n", folder, free / 1048576, need / 1048576, extra > "/dev/stderr" }'
    exit 1
  fi
done
