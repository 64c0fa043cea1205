#!/usr/bin/env bash
# What `make install` cannot do itself, said at its end: a BINDIR that is not on PATH
# (then neither `ferry` nor `man ferry` finds what was installed: man-db finds manual
# pages through PATH, BINDIR/../share/man), and bash completion without the
# bash-completion package (bash loads files from share/bash-completion/completions only
# through it).
# Usage: scripts/install-hints.sh BINDIR DATADIR
# FERRY_BASH_COMPLETION_LOADER: the package's loader script (tests point it elsewhere).
set -u
bindir="${1%/}"
datadir="${2%/}"
case ":${PATH}:" in
  *":${bindir}:"* | *":${bindir}/:"*) ;;
  *)
    echo "warning: ${bindir} is not on your PATH, so neither \`ferry\` nor \`man ferry\` finds what was installed;" \
      "add it: echo 'export PATH=\"${bindir}:\$PATH\"' >> ~/.profile, then open a new shell" >&2
    ;;
esac
loader="${FERRY_BASH_COMPLETION_LOADER:-/usr/share/bash-completion/bash_completion}"
if [ ! -e "$loader" ]; then
  echo "warning: bash loads the completion installed in ${datadir}/bash-completion/completions only with" \
    "the bash-completion package: sudo apt-get install bash-completion (scripts/bootstrap.sh install does it)" >&2
fi
exit 0
