# Shared helpers for start-nginx.sh, start-apache.sh and stop.sh. Sourced, not run.
# shellcheck shell=bash

ts_die() { # message...
  echo "$ts_name: $*" >&2
  exit 1
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

# A TCP port that was free on 127.0.0.1 a moment ago (the caller retries if it lost the race).
ts_free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()' && return 0
  fi
  # Fallback: probe random high ports until one refuses connections.
  local p i
  for i in $(seq 1 200); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

# The port to try: on a restart (DIR/port from an earlier start) the first attempt takes
# the same port again, so that clients and proxies pointed at the server find it back.
# Usage: ts_port_for DIR ATTEMPT
ts_port_for() {
  if [ "$2" -eq 1 ] && [ -s "$1/port" ]; then
    tr -dc '0-9' <"$1/port"
    return 0
  fi
  ts_free_port
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

# A random token the server serves at /.ferry-server-id, so the readiness probe knows it
# reached this server and not another one that won the port.
ts_new_token() {
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n'
}

# Wait up to ~5 s until URL/.ferry-server-id returns TOKEN. Returns 0 on success.
ts_wait_ready() { # url token pidfile conf
  local url=$1 token=$2 pidfile=$3 conf=$4 i body
  for i in $(seq 1 50); do
    body=$(curl -s --noproxy '*' --max-time 1 "$url/.ferry-server-id" 2>/dev/null || true)
    [ "$body" = "$token" ] && return 0
    # The daemon died (e.g. lost the port race): no point waiting longer.
    if [ "$i" -gt 10 ] && ! ts_live_pid "$pidfile" "$conf" >/dev/null; then return 1; fi
    sleep 0.1
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
  echo "$2"
}

# True when the last start failed because another process took the port first.
# Usage: ts_port_taken DIR ERROR_LOG_OFFSET
ts_port_taken() {
  { cat "$1/startup.log"; ts_since "$1/error.log" "$2"; } | grep -q "Address already in use"
}
