"""What one client may cost the daemon (docs/api.md, "Limits"): a head over 16 KiB gets 431
for almost no CPU, a body over 64 KiB gets 413 without being read, half-sent connections
are closed when idle and never keep a real request out, however many there are."""
import os
import resource
import socket

from conftest import GUARD, Daemon, wait_for, write

KiB = 1024
MiB = 1024 * KiB


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_until_closed(sock):
    """Everything the daemon sends until it closes the connection (a reset counts as closed)."""
    answer = b""
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return answer
            answer += data
    except ConnectionResetError:
        return answer


def start(workdir, tcp=True, env=None):
    write(f"{workdir}/photos/a.jpg", os.urandom(KiB))
    os.makedirs(f"{workdir}/remote", exist_ok=True)
    daemon = Daemon(workdir, "remotes:\n  nas:\n    type: local\n    path: remote\n"
                             "folders:\n  photos:\n    path: photos\n    remote: nas\n", tcp=tcp)
    return daemon.start(env=env)


def test_a_head_over_the_limit_is_refused_for_almost_no_cpu(workdir):
    daemon = start(workdir)
    try:
        before = cpu_seconds(daemon.process.pid)
        sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=GUARD)
        try:
            sock.sendall(b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * MiB + b"\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while the rest was still on its way: refused all the same
        answer = read_until_closed(sock)
        sock.close()
        assert answer == b"" or answer.startswith(b"HTTP/1.1 431"), answer[:200]
        assert cpu_seconds(daemon.process.pid) - before < 0.1
        # The listener goes on.
        assert daemon.get("/v1/status", tcp=True, headers={"X-API-Key": daemon.key})[0] == 200
    finally:
        daemon.stop()


def test_a_body_over_the_limit_is_refused_unread(workdir):
    daemon = start(workdir, tcp=False)
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(GUARD)
        sock.connect(daemon.socket_path)
        sock.sendall(b"POST /v1/folders/photos/run HTTP/1.1\r\nHost: localhost\r\nContent-Length: 200000000\r\n\r\n")
        answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        # Without a length: cut off at the limit.
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(GUARD)
        sock.connect(daemon.socket_path)
        sock.sendall(b"POST /v1/folders/photos/run HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
        try:
            for _ in range(64):
                sock.sendall(b"10000\r\n" + b"x" * 0x10000 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = read_until_closed(sock)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert daemon.post("/v1/folders/photos/run")[0] == 202
    finally:
        daemon.stop()


def test_idle_half_sent_connections_neither_pile_up_nor_keep_a_request_out(workdir):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    # Idle connections are closed after 1 s here (30 s by default), so the test can see it.
    daemon = start(workdir, env={"FERRY_CONTROL_LIMITS": "idle=1"})
    opened = []
    try:
        for _ in range(3000):
            sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=GUARD)
            sock.sendall(b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
            opened.append(sock)
        # A real request goes through at once: the longest-waiting half-sent ones make room.
        status, _ = daemon.get("/v1/status", tcp=True, headers={"X-API-Key": daemon.key})
        assert status == 200
        assert daemon.get("/v1/status")[0] == 200
        # The daemon holds no more than its cap of them open.
        descriptors = len(os.listdir(f"/proc/{daemon.process.pid}/fd"))
        assert descriptors < 600, descriptors
        # And one that stays half-sent is closed once idle.
        newest = opened[-1]
        newest.settimeout(GUARD)
        assert read_until_closed(newest) == b""
    finally:
        for sock in opened:
            sock.close()
        daemon.stop()
