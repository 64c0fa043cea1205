#!/usr/bin/env bash
# Starts a small SeaweedFS cluster of separate processes on free 127.0.0.1 ports: a master,
# two volume servers (in one rack; replication 001 keeps every object on both), and a
# filer with its S3 gateway. Credentials come from an -s3.config file (a cluster's S3
# gateway does not read AWS_ACCESS_KEY_ID as `weed mini` does).
# Usage: scripts/test-servers/start-s3-cluster.sh DIR
# The bucket `ferry`, access key `ferry-test-key`, secret `ferry-test-secret`, as
# start-s3.sh. Prints exactly one line on stdout, http://127.0.0.1:PORT (the S3 gateway),
# once both volume servers have joined and the bucket answers. Stop with stop.sh DIR.
#
# What made the gateway "never answer" before: every weed server takes its gRPC port as
# its HTTP port + 10000 unless told, and a client given `host:port` assumes the same. The
# volume servers and the filer are told the master as `host:port.grpcport`, but the S3
# gateway inside `weed filer -s3` reaches its filer at the filer's HTTP port + 10000
# whatever -port.grpc says, and waits for it without a word: the filer's gRPC port must be
# its HTTP port + 10000. The gateway also opens an Iceberg (8181) and a Lance (9101) port
# by default, which collide between clusters: both are turned off. And the servers'
# default -ip is the machine's address, not loopback.
set -euo pipefail
ts_name=start-s3-cluster
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

[ $# -eq 1 ] && [ -n "$1" ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(ts_abs_dir "$1")
ts_check_dir_name "$dir"
command -v weed >/dev/null || ts_die "weed is not installed (run: bash scripts/bootstrap.sh test)"

key=ferry-test-key
secret=ferry-test-secret
bucket=ferry
data="$dir/data"
"$here/stop.sh" "$dir" >&2
mkdir -p "$data" || ts_die "cannot create $data"
cd "$dir"
cat >"$data/s3.json" <<JSON
{"identities": [{"name": "ferry", "credentials": [{"accessKey": "$key", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
clean_env=(env -i "PATH=$PATH" "HOME=$dir" "TMPDIR=${TMPDIR:-/tmp}")
loopback=(-ip=127.0.0.1 -ip.bind=127.0.0.1)

signed() { # curl arguments...
  curl -s --noproxy '*' --max-time 2 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@" 2>/dev/null || true
}
volume_servers() { # master url: how many volume servers have joined
  curl -s --noproxy '*' --max-time 2 "$1/dir/status" 2>/dev/null | grep -o '"Url":"[^"]*"' | sort -u | wc -l || true
}
# Every process's command line names its own folder below DIR/data (for stop.sh's check).
# A free port whose + 10000 is free too (the filer's gRPC port, see above).
filer_port() {
  local port i
  for i in $(seq 1 50); do
    port=$(ts_free_port "$dir") || return 1
    if python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]) + 10000))' "$port" 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}
alive() {
  local name
  for name in weed-master weed-volume1 weed-volume2 weed-filer; do
    kill -0 "$(cat "$dir/$name.pid" 2>/dev/null)" 2>/dev/null || return 1
  done
}

for attempt in 1 2 3; do
  mapfile -t ports < <(ts_free_port "$dir" 10)
  [ "${#ports[@]}" -eq 10 ] || ts_die "no free TCP port on 127.0.0.1"
  ports[6]=$(filer_port) || ts_die "no free pair of TCP ports (P, P + 10000) on 127.0.0.1"
  ports[7]=$((ports[6] + 10000))
  echo "${ports[*]}" >"$dir/weed-ports"
  master="127.0.0.1:${ports[0]}.${ports[1]}"
  mkdir -p "$data/master" "$data/volume1" "$data/volume2" "$data/filer"
  "${clean_env[@]}" weed master "${loopback[@]}" -port="${ports[0]}" -port.grpc="${ports[1]}" -mdir "$data/master" \
    -volumeSizeLimitMB=64 -defaultReplication=001 </dev/null >"$dir/master.log" 2>&1 &
  echo $! >"$dir/weed-master.pid"
  for n in 1 2; do
    http=${ports[$((2 * n))]} grpc=${ports[$((2 * n + 1))]}
    "${clean_env[@]}" weed volume "${loopback[@]}" -port="$http" -port.grpc="$grpc" -dir "$data/volume$n" \
      -mserver="$master" -max=8 -dataCenter=dc1 -rack=rack1 -preStopSeconds=0 </dev/null >"$dir/volume$n.log" 2>&1 &
    echo $! >"$dir/weed-volume$n.pid"
  done
  "${clean_env[@]}" weed filer "${loopback[@]}" -port="${ports[6]}" -port.grpc="${ports[7]}" -master="$master" \
    -defaultStoreDir "$data/filer" -s3 -s3.port="${ports[8]}" -s3.port.grpc="${ports[9]}" -s3.config="$data/s3.json" \
    -s3.port.iceberg=0 -s3.port.lance=0 </dev/null >"$dir/filer.log" 2>&1 &
  echo $! >"$dir/weed-filer.pid"
  url="http://127.0.0.1:${ports[8]}"
  echo "${ports[8]}" >"$dir/port"
  # 60 s at most: a guard for a loaded machine, not a timing; a process that died stops it.
  deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    alive || break
    if [ "$(volume_servers "http://127.0.0.1:${ports[0]}")" -ge 2 ]; then
      code=$(signed -o /dev/null -w '%{http_code}' "$url/$bucket?list-type=2&max-keys=1")
      if [ "$code" = 200 ]; then
        echo "$url" >"$dir/url"
        echo "http://127.0.0.1:${ports[0]}" >"$dir/master-url"
        ts_stop_with_owner "$dir"
        echo "$url"
        exit 0
      fi
      [ "$code" = 404 ] && signed -o /dev/null -X PUT "$url/$bucket"
    fi
    ts_pause 0.1
  done
  echo "start-s3-cluster: attempt $attempt failed: $(ts_last_errors "$dir/filer.log") $(ts_last_errors "$dir/master.log")" >&2
  "$here/stop.sh" "$dir" >/dev/null 2>&1 || true
done
ts_die "the SeaweedFS cluster did not start in $dir"
