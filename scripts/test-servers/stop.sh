#!/usr/bin/env bash
# Stops the test server (nginx, Apache, the upload server or an S3 server) started from
# DIR by start-nginx.sh, start-apache.sh, start-upload.sh, start-s3.sh or start-s3-cluster.sh: TERM, wait up to 5 s, then KILL.
# Exit 0 also when nothing runs.
# Usage: scripts/test-servers/stop.sh DIR
set -uo pipefail
ts_name=stop
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

[ $# -eq 1 ] && [ -n "$1" ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(ts_abs_dir "$1")
[ -d "$dir" ] || exit 0

# The daemons call setsid(), so the master's pid is also its process group: signalling
# the group reaches the workers too. Only a pid whose command line names DIR's config
# file is signalled, so a stale pid file never hits an unrelated process.
stop_one() { # pidfile conf
  local pidfile=$1 conf=$2 pid i pgid
  pid=$(ts_live_pid "$pidfile" "$conf") || { rm -f "$pidfile"; return 0; }
  pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "stop: $pid did not exit after TERM, sending KILL" >&2
    if [ "$pgid" = "$pid" ]; then kill -KILL -- "-$pgid" 2>/dev/null; else kill -KILL "$pid" 2>/dev/null; fi
  fi
  # Workers left behind by a killed master (same process group) go too.
  if [ "$pgid" = "$pid" ]; then
    for i in $(seq 1 20); do
      pgrep -g "$pgid" >/dev/null 2>&1 || break
      [ "$i" -eq 10 ] && kill -KILL -- "-$pgid" 2>/dev/null
      sleep 0.1
    done
  fi
  rm -f "$pidfile"
}

stop_one "$dir/nginx.pid" "$dir/nginx.conf"
stop_one "$dir/httpd.pid" "$dir/httpd.conf"
stop_one "$dir/upload.pid" "$dir/upload.conf"
stop_one "$dir/weed.pid" "$dir/data"
stop_one "$dir/moto.pid" "$dir/data/moto-launch.py"
# start-s3-cluster.sh: the filer (and its S3 gateway) first, the master last.
stop_one "$dir/weed-filer.pid" "$dir/data/filer"
stop_one "$dir/weed-volume1.pid" "$dir/data/volume1"
stop_one "$dir/weed-volume2.pid" "$dir/data/volume2"
stop_one "$dir/weed-master.pid" "$dir/data/master"
rm -f "$dir/url"
exit 0
