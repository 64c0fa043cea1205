#!/usr/bin/env bash
# `make deb`: a Debian package of Ferry for machines without Swift: the release binary with
# the Swift runtime linked in, the man page, shell completions, the systemd user unit and
# the docs, as `make install PREFIX=/usr` lays them out. Its dependencies are the packages
# that own the shared libraries the binary needs (readelf's NEEDED, resolved by ldconfig,
# owned per dpkg), each at least the version it was built against.
# Writes .build/deb/ferry_VERSION_ARCH.deb and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."

stage="$PWD/.build/deb/stage"
rm -rf "$stage"
mkdir -p "$stage/DEBIAN"
make --no-print-directory install DESTDIR="$stage" PREFIX=/usr CONFIGURATION=release >&2

binary="$stage/usr/bin/ferry"
# Symbols are for debugging the build, not for users: most of the binary's size.
strip --strip-unneeded "$binary"
version=$("$binary" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)

# The package owning a library: dpkg knows it under /lib or /usr/lib (merged /usr).
owner() {
  local path="$1" real
  real=$(readlink -f "$path")
  for candidate in "$path" "$real" "${path/#\/usr\/lib\//\/lib\/}" "${real/#\/usr\/lib\//\/lib\/}" "${path/#\/lib\//\/usr\/lib\/}"; do
    if found=$(dpkg -S "$candidate" 2>/dev/null); then
      echo "${found%%:*}"
      return 0
    fi
  done
  echo "make-deb: no package owns $path (needed by ferry); is it installed from Debian?" >&2
  return 1
}

depends=()
for soname in $(readelf -d "$binary" | awk '/NEEDED/ {gsub(/[\[\]]/, "", $5); print $5}'); do
  # awk reads to the end (no `exit`): ldconfig, cut off mid-write, would die of SIGPIPE,
  # and pipefail would end the script with it.
  path=$(ldconfig -p | awk -v name="$soname" '$1 == name && /x86-64|aarch64|arm|i386/ && !found {print $NF; found = 1}')
  [ -n "$path" ] || path=$(ldconfig -p | awk -v name="$soname" '$1 == name && !found {print $NF; found = 1}')
  [ -n "$path" ] || { echo "make-deb: $soname (needed by ferry) is not on this machine" >&2; exit 1; }
  package=$(owner "$path")
  upstream=$(dpkg-query -W -f='${Version}' "$package" | sed 's/-[^-]*$//')
  depends+=("$package (>= $upstream)")
done
depends_line=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')

installed_kib=$(du -sk "$stage/usr" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: ferry
Version: $version
Architecture: $arch
Maintainer: Ferry maintainers <ferry@localhost>
Installed-Size: $installed_kib
Depends: $depends_line
Recommends: bash-completion, man-db
Section: net
Priority: optional
Description: file sync for photo, video and GPS-track folders
 Ferry pushes, pulls and syncs folders to local disks, WebDAV, HTTP and S3
 stores and external plugins, resumes after any failure, and keeps every
 file's state in an SQLite journal. It runs by hand (ferry push/pull/sync),
 on a schedule, or as a daemon that watches folders (systemctl --user
 enable --now ferry), with a control API and a status page.
CONTROL

output=".build/deb/ferry_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group "$stage" "$output" >&2
echo "$output"
