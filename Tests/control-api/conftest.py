"""A real `ferry daemon` for the control API's tests: its own folders, config and state in
a temporary directory, the API reached over its Unix socket (or TCP with the key).

Every wait is for an event (a file, an answer, an event on the stream) with a generous
time-out that only guards against a hang; nothing here asserts on elapsed time.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GUARD = 120  # seconds: only a guard against a hang


def ferry_binary():
    return os.environ.get("FERRY_BIN") or os.path.join(ROOT, ".build", "debug", "ferry")


def wait_for(condition, what, timeout=GUARD):
    """Polls `condition` until it returns something true; fails naming `what` on a hang."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.02)


def read_or_none(path):
    """A file's bytes, or None while nothing is under that name (a two-way sync moves the
    remote version aside before it puts the new one in place)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=GUARD):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


class Daemon:
    """`ferry daemon` on a config written by the test."""

    def __init__(self, directory, config, tcp=False):
        self.dir = directory
        self.state = os.path.join(directory, "state")
        self.config_path = os.path.join(directory, "config.yml")
        self.port = free_port() if tcp else None
        if tcp:
            config += f"daemon:\n  listen: 127.0.0.1:{self.port}\n"
        with open(self.config_path, "w") as f:
            f.write(config)
        self.process = None

    @property
    def socket_path(self):
        return os.path.join(self.state, "control.sock")

    def ferry(self, *arguments, check=None):
        result = subprocess.run([ferry_binary(), *arguments, "--config", self.config_path, "--state", self.state],
                                cwd=self.dir, capture_output=True, text=True, timeout=GUARD)
        if check is not None:
            assert result.returncode == check, result.stdout + result.stderr
        return result

    def start(self, env=None):
        self.log = open(os.path.join(self.dir, "daemon.log"), "w")
        self.process = subprocess.Popen([ferry_binary(), "daemon", "--config", self.config_path, "--state", self.state,
                                         "--log-level", "info"], cwd=self.dir, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **(env or {})})
        wait_for(lambda: self.answers(), "the daemon's control socket")
        if self.port:
            wait_for(lambda: self.tcp_answers(), "the daemon's TCP address")
        return self

    def answers(self):
        if self.process.poll() is not None:
            raise AssertionError("the daemon exited: " + open(os.path.join(self.dir, "daemon.log")).read())
        try:
            status, _ = self.get("/v1/status")
            return status == 200
        except OSError:
            return False

    def tcp_answers(self):
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
            connection.request("GET", "/")
            return connection.getresponse().status == 200
        except OSError:
            return False

    @property
    def key(self):
        with open(os.path.join(self.state, "api-key")) as f:
            return f.read().strip()

    def request(self, method, path, body=None, headers=None, tcp=False):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=GUARD) if tcp else UnixConnection(self.socket_path)
        data = None if body is None else json.dumps(body).encode()
        headers = dict(headers or {})
        if data is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        try:
            response = connection.getresponse()
            raw = response.read()
        except TimeoutError:
            connection.close()
            raise AssertionError(f"the daemon did not answer {method} {path} within {GUARD} s\n{self.hang_report()}") from None
        connection.close()
        kind = response.getheader("Content-Type") or ""
        return response.status, (json.loads(raw) if "json" in kind and raw else raw.decode())

    def hang_report(self):
        """What a daemon that stopped answering was doing: its log's end and every thread's
        stack (gdb), for a hang seen once under load (test_holds, ci15)."""
        try:
            with open(os.path.join(self.dir, "daemon.log"), errors="replace") as f:
                log = "".join(f.readlines()[-40:])
        except OSError as error:
            log = f"(no log: {error})"
        if not (self.process and self.process.poll() is None):
            stacks = "(no stacks: the daemon has exited)"
        elif not shutil.which("gdb"):
            stacks = "(no stacks: gdb is not installed; scripts/bootstrap.sh test installs it)"
        else:
            try:
                stacks = subprocess.run(["gdb", "-p", str(self.process.pid), "-batch", "-ex", "thread apply all bt 30"],
                                        capture_output=True, text=True, timeout=90).stdout
                stacks = "\n".join(line for line in stacks.splitlines() if line.startswith(("Thread ", "#")))
            except (OSError, subprocess.TimeoutExpired) as error:
                stacks = f"(gdb failed: {error})"
        return f"daemon log (end):\n{log}\nthreads:\n{stacks}"

    def get(self, path, **options):
        return self.request("GET", path, **options)

    def post(self, path, body=None, **options):
        return self.request("POST", path, body=body if body is not None else {}, **options)

    def folder(self, name):
        status, folder = self.get(f"/v1/folders/{name}")
        assert status == 200, folder
        return folder

    def events_after(self, last_id, wait=5):
        status, batch = self.get(f"/v1/events/batch?after={last_id}&wait={wait}")
        assert status == 200, batch
        return batch

    def last_event_id(self):
        return self.get("/v1/events/batch")[1]["last_id"]

    def wait_for_event(self, after, matches, what):
        """Reads events after id `after` until one matches; returns it and every event read."""
        seen = []
        last = after
        deadline = time.monotonic() + GUARD
        while time.monotonic() < deadline:
            batch = self.events_after(last, wait=5)
            for event in batch["events"]:
                seen.append(event)
                if matches(event):
                    return event, seen
            last = batch["last_id"]
        raise AssertionError(f"no event for {what}; saw {[e['name'] for e in seen]}")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if getattr(self, "log", None):
            self.log.close()


class EventStream:
    """`/v1/events` read over the Unix socket, frame by frame."""

    def __init__(self, daemon, last_event_id=None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(GUARD)
        self.sock.connect(daemon.socket_path)
        extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id is not None else ""
        self.sock.sendall(f"GET /v1/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n{extra}\r\n".encode())
        self.buffer = b""
        head = self._until(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        assert b"text/event-stream" in head
        self.text = ""

    def _until(self, marker):
        while marker not in self.buffer:
            data = self.sock.recv(65536)
            assert data, "the stream closed"
            self.buffer += data
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def _chunk(self):
        size = int(self._until(b"\r\n"), 16)
        while len(self.buffer) < size + 2:
            data = self.sock.recv(65536)
            assert data, "the stream closed"
            self.buffer += data
        chunk, self.buffer = self.buffer[:size], self.buffer[size + 2:]
        return chunk.decode()

    def next(self):
        """The next event as (id, name, data)."""
        while "\n\n" not in self.text:
            self.text += self._chunk()
        block, self.text = self.text.split("\n\n", 1)
        fields = {}
        for line in block.split("\n"):
            if line.startswith(":") or ":" not in line:
                continue
            name, value = line.split(":", 1)
            fields[name] = value.lstrip(" ")
        if "event" not in fields:
            return self.next()
        return (int(fields["id"]) if "id" in fields else None, fields["event"], json.loads(fields.get("data", "{}")))

    def close(self):
        self.sock.close()


def write(path, data, age=None):
    """Writes the file; with `age`, dates it that many seconds back (a file made before the
    daemon starts that its first run must take: a fresh one is left out until it settles)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if age is not None:
        made = time.time() - age
        os.utime(path, (made, made))


def held_store_remote(name, directory, hold):
    """A remote through the exec test plugin `faulty` in front of the content store, which
    holds the uploads named in `hold` until the test writes `gates/release-NAME`; it writes
    `gates/held-NAME` when one is held (event gates, no race against time)."""
    os.makedirs(f"{directory}/gates", exist_ok=True)
    return (f"  {name}:\n    type: exec:faulty\n    plugin_dir: {ROOT}/scripts/test-plugins\n"
            f"    inner: {ROOT}/Plugins/ContentStorePlugin/ferry-backend-cas\n    path: {directory}/store\n"
            f"    fault_state: {directory}/gates\n    stall_timeout: 3600\n    hold: {hold}\n")


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="ferry-api-") as directory:
        yield directory
