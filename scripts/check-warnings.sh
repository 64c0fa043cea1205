#!/usr/bin/env bash
# Fails when the build log shows a compiler warning in Ferry's own code (dependencies'
# warnings are theirs). Swift 6 mode plus this check is the "no warnings" rule.
set -euo pipefail
log="$1"
own=$(grep -E "^/[^ ]*/(Sources|Plugins|Tests)/[^ ]*: warning:" "$log" | grep -v "/.build/" | sort -u || true)
if [ -n "$own" ]; then
  echo "check-warnings: compiler warnings in Ferry's code:" >&2
  echo "$own" >&2
  exit 1
fi
