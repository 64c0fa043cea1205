# Shared helpers for start-nginx.sh, start-apache.sh and stop.sh. Sourced, not run.
# shellcheck shell=bash

ts_die() { # message...
  echo "$ts_name: $*" >&2
  exit 1
}

# Waits SECONDS without a process: `read -t` on a pipe nothing ever writes to. The
# servers' start and stop loops poll every 0.1 s, and a `sleep` per turn was a fork and
# an exec each time.
exec {ts_never}<> <(:)
ts_pause() { # seconds
  read -r -t "$1" -u "$ts_never" _ || true
}

# Absolute, normalised form of a folder path that may not exist yet.
ts_abs_dir() {
  local d=$1
  case "$d" in /*) ;; *) d="$PWD/$d" ;; esac
  realpath -m -- "$d"
}

# Config files quote paths with "..."; nginx also expands $ in some directives.
ts_check_dir_name() {
  case "$1" in
    *'"'* | *'$'* | *'\'* | *';'* | *'{'* | *'}'* | *'#'* | *$'\n'* | *$'\t'*)
      ts_die "DIR must not contain any of \" \$ \\ ; { } # or control characters (got '$1')" ;;
  esac
}

# A TCP port for a test server on 127.0.0.1, claimed for DIR.
#
# Chosen below the kernel's ephemeral range (net.ipv4.ip_local_port_range), so that no
# client connection (curl, the tests' own) ever sits on it, and claimed with an atomic
# mkdir under $TMPDIR/ferry-test-ports: a server that is stopped and restarted by a test
# gets the same port back, because no other test server can take it meanwhile. A claim
# whose DIR is gone is stale and is taken over.
# Usage: ts_free_port DIR [COUNT] (COUNT ports, one a line: one Python start for all)
ts_free_port() {
  python3 - "$1" "${2:-1}" <<'PY'
import os, random, socket, sys
owner = sys.argv[1]
wanted = int(sys.argv[2])
claims = os.path.join(os.environ.get("TMPDIR") or "/tmp", "ferry-test-ports")
os.makedirs(claims, exist_ok=True)
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
first, last = 20000, min(low, 32768)
if last - first < 1000:
    first, last = 10000, max(low, 11000)
def bindable(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()
def claim(port):
    path = os.path.join(claims, str(port))
    try:
        os.mkdir(path)
    except FileExistsError:
        try:
            holder = open(os.path.join(path, "owner")).read().strip()
        except OSError:
            return False  # being claimed right now
        if holder != owner and os.path.isdir(holder):
            return False
    with open(os.path.join(path, "owner"), "w") as f:
        f.write(owner)
    return True
found = []
for _ in range(2000 * wanted):
    port = random.randrange(first, last)
    if port not in found and bindable(port) and claim(port):
        found.append(port)
        if len(found) == wanted:
            print("\n".join(map(str, found)))
            sys.exit(0)
sys.exit(1)
PY
}

# The port to try. A restart (DIR/port from an earlier start) takes the same port again,
# waiting up to 10 s for it to be free: clients and proxies pointed at the server must
# find it back, and the claim keeps other test servers off it.
# Usage: ts_port_for DIR ATTEMPT
ts_port_for() {
  if [ -s "$1/port" ]; then
    local port i
    port=$(tr -dc '0-9' <"$1/port")
    for i in $(seq 1 100); do
      python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$port" 2>/dev/null && break
      ts_pause 0.1
    done
    echo "$port"
    return 0
  fi
  ts_free_port "$1"
}

# The pid in a pid file if that process is alive and was started with config file CONF.
ts_live_pid() { # pidfile conf
  local pidfile=$1 conf=$2 pid cmd
  [ -f "$pidfile" ] && [ -s "$pidfile" ] || return 1
  pid=$(tr -dc '0-9' <"$pidfile")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  case "$cmd " in *" $conf "*) echo "$pid" ;; *) return 1 ;; esac
}

# SeaweedFS makes a Unix socket in /tmp for each of its ports
# (/tmp/seaweedfs-s3-PORT.sock, /tmp/seaweedfs-master-grpc-PORT.sock, …), whatever TMPDIR
# says and only some of them configurable, and leaves them behind when stopped: a day of
# test runs left 2,060 of them. This removes those of the ports listed in DIR/weed-ports
# (written by start-s3.sh and start-s3-cluster.sh) that nothing listens on any more; a
# socket that answers belongs to a live server that has the port now.
ts_remove_weed_sockets() { # dir
  [ -f "$1/weed-ports" ] || return 0
  python3 - "$1/weed-ports" <<'PY'
import glob, os, socket, stat, sys
for port in open(sys.argv[1]).read().split():
    for path in glob.glob(f"/tmp/seaweedfs-*-{port}.sock"):
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
            probe = socket.socket(socket.AF_UNIX)
            probe.settimeout(1)
            try:
                probe.connect(path)
            except ConnectionRefusedError:
                os.unlink(path)
            finally:
                probe.close()
        except OSError:
            pass
PY
  rm -f "$1/weed-ports"
}

# A random token the server serves at /.ferry-server-id, so the readiness probe knows it
# reached this server and not another one that won the port.
ts_new_token() {
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n'
}

# Wait until URL/.ferry-server-id returns TOKEN (30 s at most: a guard, generous for a
# loaded machine; a server that died stops the wait at once). Returns 0 on success.
ts_wait_ready() { # url token pidfile conf [launched-pid]
  local url=$1 token=$2 pidfile=$3 conf=$4 launched=${5:-} i body
  for i in $(seq 1 300); do
    body=$(curl -s --noproxy '*' --max-time 1 "$url/.ferry-server-id" 2>/dev/null || true)
    [ "$body" = "$token" ] && return 0
    # The server died (e.g. lost the port race): no point waiting longer. A server that
    # runs in the foreground is watched through the process we started (on a loaded
    # machine Python takes seconds to write its pid file); a daemon through its pid file.
    if [ -n "$launched" ]; then
      kill -0 "$launched" 2>/dev/null || return 1
    elif [ "$i" -gt 50 ] && ! ts_live_pid "$pidfile" "$conf" >/dev/null; then
      return 1
    fi
    ts_pause 0.1
  done
  return 1
}

ts_last_errors() { # logfile
  if [ -s "$1" ]; then tail -n 3 "$1" | tr '\n' ' ' | sed 's/  */ /g'; else echo "(no $1)"; fi
}

# Size of a file in bytes (0 if missing), to look only at log lines written after it.
ts_size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# Text appended to FILE since it had SIZE bytes.
ts_since() { # file size
  [ -f "$1" ] && tail -c +"$(( $2 + 1 ))" "$1" 2>/dev/null || true
}

# Records what runs from DIR and prints its URL, the start scripts' one line of output.
# Usage: ts_announce DIR URL SERVER DATA_OWNER
ts_announce() {
  echo "$2" >"$1/url"
  echo "${2##*:}" >"$1/port"
  echo "$3" >"$1/server"
  echo "$4" >"$1/data-owner"
  ts_stop_with_owner "$1"
  echo "$2"
}

# Stops what runs from DIR once the process that ran the start script (the test run, a
# benchmark, your shell) has ended without stopping it: the servers are daemons in their
# own session and outlive a test run that is killed. A watcher in a session of its own
# waits in `tail --pid` (one process that looks once a second, no fork: its loop of
# `sleep 1`, a hundred servers up at once, made most of the 26,570 `sleep` processes of
# one run of the Swift tests), then runs `stop.sh DIR` if DIR/url is still there.
# stop.sh ends the watcher.
# FERRY_TEST_SERVER_OWNER=PID watches another process; =none keeps the server running.
# Usage: ts_stop_with_owner DIR (after DIR/url is written)
ts_stop_with_owner() {
  local owner=${FERRY_TEST_SERVER_OWNER:-$PPID}
  [ "$owner" = none ] && return 0
  setsid bash -c '
    owner=$1 dir=$2 stop=$3
    echo $$ >"$dir/watcher.pid"
    tail --pid="$owner" -f /dev/null
    rm -f "$dir/watcher.pid"
    [ -f "$dir/url" ] && exec bash "$stop" "$dir"
  ' ferry-server-watch "$owner" "$1" "$here/stop.sh" </dev/null >/dev/null 2>&1 &
}

# Ends the watcher of DIR (ts_stop_with_owner), unless it is the caller: the watcher
# runs stop.sh itself once the owner is gone.
ts_end_watcher() { # dir
  local watcher
  watcher=$(ts_live_pid "$1/watcher.pid" "$1") || return 0
  [ "$watcher" = "$$" ] && return 0
  kill -TERM -- "-$watcher" 2>/dev/null
  rm -f "$1/watcher.pid"
}

# True when the last start failed because another process took the port first.
# Usage: ts_port_taken DIR ERROR_LOG_OFFSET
ts_port_taken() {
  { cat "$1/startup.log"; ts_since "$1/error.log" "$2"; } | grep -q "Address already in use"
}
