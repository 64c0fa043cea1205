#!/usr/bin/env python3
"""A daemon that runs for a long time (`make soak`; not part of `make test`).

Runs `ferry daemon` (FERRY_BIN, default .build/release/ferry) with two watched folders,
one to a local folder and one to nginx's WebDAV through fault-proxy.py (a share of
requests fail), and for --minutes keeps at it:

  churn     files written and rewritten in both folders, a few a second (push folders
            do not carry deletions over unless asked, so none are made)
  reloads   SIGHUP every --reload-every seconds (the config is read again)
  clients   an event stream that stays open, long polls, status reads, a run asked for
            over the API, and connections that send half a request and go quiet

Every --sample seconds it reads the daemon's resident memory and open descriptors from
/proc. At the end the event stream must still be the one opened first, the daemon must
answer, both remotes must hold what the folders hold once the churn stops, and memory and
descriptors must be flat: the last quarter's median no more than 20% (plus 8 MiB) over
the second quarter's for memory, and within 16 descriptors for descriptors. Writes
bench-results/daemon-soak.md and exits 1 when a check fails.
"""
import argparse, http.client, json, os, random, signal, socket, statistics, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402  (the servers, the fault proxy and the cleanup of the reliability soak)

REPO = soak.REPO


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def request(socket_path, method, path, body=None):
    connection = UnixHTTP(socket_path)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Stream(threading.Thread):
    """`/v1/events`, read from one connection for the whole soak; counts events and reloads."""

    def __init__(self, socket_path):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(socket_path)
        self.sock.sendall(b"GET /v1/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        self.events, self.reloads, self.closed = 0, 0, False

    def run(self):
        buffer = b""
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break
                buffer += data
                self.events += buffer.count(b"\nevent: ")
                self.reloads += buffer.count(b"event: reload\n")
                buffer = buffer[-32:]
        except OSError:
            pass
        self.closed = True


def churn(folders, stop, seed):
    rng = random.Random(seed)
    while not stop.is_set():
        folder = rng.choice(folders)
        name = os.path.join(folder, f"DCIM/IMG_{rng.randrange(200):04d}.jpg")
        os.makedirs(os.path.dirname(name), exist_ok=True)
        with open(name, "wb") as f:
            f.write(rng.randbytes(rng.randrange(1, 256) * 1024))
        stop.wait(0.2)


def clients(socket_path, port, stop, seed):
    rng = random.Random(seed)
    while not stop.is_set():
        choice = rng.random()
        try:
            if choice < 0.4:
                request(socket_path, "GET", "/v1/status")
            elif choice < 0.6:
                status, body = request(socket_path, "GET", "/v1/events/batch")
                last = json.loads(body)["last_id"]
                request(socket_path, "GET", f"/v1/events/batch?after={last}&wait=2")
            elif choice < 0.7:
                request(socket_path, "POST", "/v1/folders/local/run", {})
            else:
                # Half a request, then silence: the daemon closes it when idle.
                half = socket.create_connection(("127.0.0.1", port), timeout=5)
                half.sendall(b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                threading.Timer(40, half.close).start()
        except (OSError, http.client.HTTPException, ValueError):
            pass  # a reload in progress, or the daemon stopping
        stop.wait(0.5)


def same_tree(a, b):
    def files(root):
        found = {}
        for folder, _, names in os.walk(root):
            if any(part.startswith(".ferry") for part in os.path.relpath(folder, root).split(os.sep)):
                continue
            for name in names:
                path = os.path.join(folder, name)
                found[os.path.relpath(path, root)] = open(path, "rb").read()
        return found
    return files(a) == files(b)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--reload-every", type=float, default=30)
    parser.add_argument("--sample", type=float, default=5)
    parser.add_argument("--fault-share", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    binary = os.environ.get("FERRY_BIN") or os.path.join(REPO, ".build", "release", "ferry")
    work = tempfile.mkdtemp(prefix="ferry-daemon-soak-")
    signal.signal(signal.SIGTERM, soak.on_sigterm)
    try:
        nginx = soak.Server("nginx", os.path.join(work, "nginx"))
        nginx.start()
        proxy = soak.FaultProxy(nginx.url, arguments.fault_share, arguments.seed, os.path.join(work, "proxy.log"))
        for name in ("local", "dav"):
            os.makedirs(os.path.join(work, name, "DCIM"), exist_ok=True)
        os.makedirs(os.path.join(work, "remote"), exist_ok=True)
        port = soak_port()
        config = os.path.join(work, "config.yml")
        with open(config, "w") as f:
            f.write("remotes:\n  disk:\n    type: local\n    path: remote\n"
                    f"  nas:\n    type: webdav\n    url: {proxy.url}/dav/soak/\n"
                    "folders:\n  local:\n    path: local\n    remote: disk\n"
                    "  dav:\n    path: dav\n    remote: nas\n"
                    "watch:\n  quiet_period: 1s\n"
                    f"daemon:\n  listen: 127.0.0.1:{port}\n")
        state = os.path.join(work, "state")
        log_file = open(os.path.join(work, "daemon.log"), "w")
        daemon = subprocess.Popen([binary, "daemon", "--config", config, "--state", state, "--log-level", "warning"],
                                  cwd=work, stdout=log_file, stderr=subprocess.STDOUT)
        soak.CLEANUP.push("stop the daemon", lambda: soak.kill_process(daemon))
        socket_path = os.path.join(state, "control.sock")
        deadline = time.monotonic() + 60
        while not os.path.exists(socket_path):
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise RuntimeError("the daemon did not start: " + open(os.path.join(work, "daemon.log")).read())
            time.sleep(0.05)

        stream = Stream(socket_path)
        stream.start()
        stop = threading.Event()
        workers = [threading.Thread(target=churn, args=([os.path.join(work, "local"), os.path.join(work, "dav")], stop,
                                                       arguments.seed), daemon=True),
                   threading.Thread(target=clients, args=(socket_path, port, stop, arguments.seed + 1), daemon=True)]
        for worker in workers:
            worker.start()
        samples, reloads_sent = [], 0
        started = time.monotonic()
        next_reload = started + arguments.reload_every
        end = started + arguments.minutes * 60
        while time.monotonic() < end:
            if daemon.poll() is not None:
                raise RuntimeError(f"the daemon exited ({daemon.returncode})")
            samples.append((time.monotonic() - started, rss_kib(daemon.pid), descriptors(daemon.pid)))
            soak.log(f"{samples[-1][0]:6.0f} s  RSS {samples[-1][1] / 1024:6.1f} MiB  fds {samples[-1][2]}  "
                     f"events {stream.events}  reloads {stream.reloads}/{reloads_sent}")
            if time.monotonic() >= next_reload:
                daemon.send_signal(signal.SIGHUP)
                reloads_sent += 1
                next_reload += arguments.reload_every
            time.sleep(arguments.sample)
        stop.set()
        for worker in workers:
            worker.join(60)

        # Once the churn stops, both remotes come to hold what the folders hold.
        request(socket_path, "POST", "/v1/folders/local/run", {})
        request(socket_path, "POST", "/v1/folders/dav/run", {})
        settled = {"local": False, "dav": False}
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not all(settled.values()):
            settled["local"] = same_tree(os.path.join(work, "local"), os.path.join(work, "remote"))
            settled["dav"] = same_tree(os.path.join(work, "dav"), os.path.join(nginx.root, "soak"))
            if not all(settled.values()):
                for name in settled:
                    request(socket_path, "POST", f"/v1/folders/{name}/run", {})
                time.sleep(2)
        answered = request(socket_path, "GET", "/v1/status")[0] == 200

        quarter = max(1, len(samples) // 4)
        second = samples[quarter:2 * quarter] or samples
        last = samples[-quarter:]
        rss_second, rss_last = statistics.median(s[1] for s in second), statistics.median(s[1] for s in last)
        fd_second, fd_last = statistics.median(s[2] for s in second), statistics.median(s[2] for s in last)
        checks = [
            ("the event stream opened first is still open", not stream.closed),
            (f"it carried every reload ({stream.reloads} of {reloads_sent})", stream.reloads == reloads_sent),
            ("the daemon answers", answered),
            ("the local remote holds the folder", settled["local"]),
            ("the WebDAV remote (through faults) holds the folder", settled["dav"]),
            (f"memory flat: {rss_second / 1024:.1f} → {rss_last / 1024:.1f} MiB", rss_last <= rss_second * 1.2 + 8 * 1024),
            (f"descriptors flat: {fd_second:.0f} → {fd_last:.0f}", fd_last <= fd_second + 16),
        ]
        lines = ["# Daemon soak", "",
                 f"{arguments.minutes:g} minutes, {reloads_sent} reloads, {stream.events} events on one stream, "
                 f"fault share {arguments.fault_share}, seed {arguments.seed}; binary {binary}.", "",
                 "| check | |", "|---|---|"]
        lines += [f"| {text} | {'ok' if passed else '**failed**'} |" for text, passed in checks]
        lines += ["", "| seconds | RSS MiB | descriptors |", "|---|---|---|"]
        step = max(1, len(samples) // 20)
        lines += [f"| {t:.0f} | {r / 1024:.1f} | {d} |" for t, r, d in samples[::step]]
        report = "\n".join(lines) + "\n"
        os.makedirs(os.path.join(REPO, "bench-results"), exist_ok=True)
        with open(os.path.join(REPO, "bench-results", "daemon-soak.md"), "w") as f:
            f.write(report)
        print(report)
        stream.sock.close()
        return 0 if all(passed for _, passed in checks) else 1
    finally:
        soak.CLEANUP.run_all()


def soak_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    sys.exit(main())
