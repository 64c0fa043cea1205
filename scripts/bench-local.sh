#!/usr/bin/env bash
# Runs the local-directory benchmark (see bench-local.py).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/bench-local.py "$@"
