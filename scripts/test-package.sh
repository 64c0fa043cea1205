#!/usr/bin/env bash
# `make test-package`: the Debian package as a user meets it. Builds it (make deb),
# installs it with apt-get (which resolves its dependencies), then checks the command, the
# man page, the completion and the systemd unit are where they belong and a push works,
# then removes it and checks nothing is left. Needs root (apt-get); run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

deb=$(bash scripts/make-deb.sh)
echo "test-package: $deb"
# One install at a time on a machine: two runs (say, two clones' CI) would install and
# remove the same package under each other.
exec 9>/tmp/ferry-test-package.lock
flock 9
dpkg-deb --info "$deb" | sed -n '/Depends/p'
if dpkg-query -W -f='${Status}' ferry 2>/dev/null | grep -q "install ok installed"; then
  echo "test-package: a ferry package is installed already; not touching it" >&2
  exit 1
fi
work=$(mktemp -d)
cleanup() {
  apt-get remove -y -q ferry >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

apt-get install -y -q "./$deb"
fail() { echo "test-package: $*" >&2; exit 1; }
[ -x /usr/bin/ferry ] || fail "/usr/bin/ferry is missing"
# Outputs captured whole: `cmd | grep -q` could cut cmd off (SIGPIPE) and pipefail fail it.
version=$(/usr/bin/ferry --version)
[[ "$version" == "ferry "* ]] || fail "ferry --version printed no version: $version"
page=$(man -w ferry)
[[ "$page" == /usr/share/man/man1/ferry.1* ]] || fail "man -w ferry does not find the page: $page"
[ -f /usr/share/bash-completion/completions/ferry ] || fail "no bash completion"
[ -f /usr/lib/systemd/user/ferry.service ] || fail "no systemd user unit"
grep -q '^ExecStart=/usr/bin/ferry ' /usr/lib/systemd/user/ferry.service || fail "the unit does not start /usr/bin/ferry"

# A push with the installed binary, outside the source tree.
mkdir -p "$work/photos/DCIM"
head -c 100000 /dev/urandom > "$work/photos/DCIM/IMG_0001.jpg"
(cd "$work" && /usr/bin/ferry push photos --to backup --state state) || fail "a push with the installed binary failed"
cmp "$work/photos/DCIM/IMG_0001.jpg" "$work/backup/DCIM/IMG_0001.jpg" || fail "the pushed file differs"

apt-get remove -y -q ferry
[ ! -e /usr/bin/ferry ] || fail "/usr/bin/ferry is left after removal"
[ ! -e /usr/share/man/man1/ferry.1.gz ] && [ ! -e /usr/share/man/man1/ferry.1 ] || fail "the man page is left after removal"
echo "test-package: installed, used and removed $deb"
