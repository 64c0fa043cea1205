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
#
# Every server of a step is sent TERM at once and then waited for: a SeaweedFS process
# takes 3-4 s to exit, and one after the other the four of a cluster took over 15 s.
stop_together() { # pidfile conf [pidfile conf]...
  local pids=() pgids=() pidfiles=() pid pgid i k alive
  while [ $# -ge 2 ]; do
    pidfiles+=("$1")
    if pid=$(ts_live_pid "$1" "$2"); then
      pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')
      pids+=("$pid")
      pgids+=("$([ "$pgid" = "$pid" ] && echo "$pgid" || echo -)")
      kill -TERM "$pid" 2>/dev/null
    fi
    shift 2
  done
  for i in $(seq 1 50); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    ts_pause 0.1
  done
  for k in "${!pids[@]}"; do
    pid=${pids[$k]} pgid=${pgids[$k]}
    if kill -0 "$pid" 2>/dev/null; then
      echo "stop: $pid did not exit after TERM, sending KILL" >&2
      if [ "$pgid" != - ]; then kill -KILL -- "-$pgid" 2>/dev/null; else kill -KILL "$pid" 2>/dev/null; fi
    fi
    # Workers left behind by a killed master (same process group) go too.
    if [ "$pgid" != - ]; then
      for i in $(seq 1 20); do
        pgrep -g "$pgid" >/dev/null 2>&1 || break
        [ "$i" -eq 10 ] && kill -KILL -- "-$pgid" 2>/dev/null
        ts_pause 0.1
      done
    fi
  done
  rm -f "${pidfiles[@]}"
}

stop_together "$dir/nginx.pid" "$dir/nginx.conf" \
  "$dir/httpd.pid" "$dir/httpd.conf" \
  "$dir/upload.pid" "$dir/upload.conf" \
  "$dir/weed.pid" "$dir/data" \
  "$dir/moto.pid" "$dir/data/moto-launch.py" \
  "$dir/weed-filer.pid" "$dir/data/filer" \
  "$dir/weed-volume1.pid" "$dir/data/volume1" \
  "$dir/weed-volume2.pid" "$dir/data/volume2"
# start-s3-cluster.sh: the master after the servers that report to it.
stop_together "$dir/weed-master.pid" "$dir/data/master"
ts_remove_weed_sockets "$dir"
rm -f "$dir/url"
ts_end_watcher "$dir"
exit 0
