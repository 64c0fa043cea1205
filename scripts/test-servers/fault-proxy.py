#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for tests: forwards every request to an upstream server,
except a chosen share, which get a fault instead.

Usage: fault-proxy.py UPSTREAM_ORIGIN SHARE [SEED] [--kinds KIND,...] [--script METHOD=KIND,...]
                      [--log FILE] [--mkcol-race SECONDS]
  e.g. fault-proxy.py http://127.0.0.1:8080 0.2
       fault-proxy.py http://127.0.0.1:8080 0.3 7 --kinds 500,503,reset,delay,lost --log faults.log
       fault-proxy.py http://127.0.0.1:8080 0 --script MOVE=lost,500
Prints `http://127.0.0.1:PORT` once listening; runs until killed. Loopback only.

Fault kinds (default: 500,503,reset — the same faults, drawn from the same random
sequence, as before the other kinds existed):
  500, 503  answer with that status; the request never reaches the server
  reset     drop the connection with a TCP reset; the request never reaches the server
  delay     wait 0.2–1 s, then forward the request as usual
  lost      forward the request (the server does the work), then close the connection
            without a reply: the client never hears that it succeeded
  stall     take the request, then send nothing for 60 s (a server that hangs); the
            request never reaches the server
  409       answer 409 Conflict; the request never reaches the server
  403       answer 403 Forbidden (a permanent refusal); the request never reaches the server
  501       answer 501 with an S3 NotImplemented error; the request never reaches the server
  conflict  forward the request (the server does the work), then answer 409 Conflict
            instead of the server's answer (another client won a race for the same thing)
--script METHOD=KIND,... (repeatable) replays a sequence exactly: the first request with
that method gets the first KIND, the second the second, and so on (`ok` forwards it
untouched); after the list, requests are treated as usual. It turns a fault sequence
seen once in a random run into a reproducible one.
--path-script REGEX=KIND,... (repeatable) does the same per request line: for each
distinct `METHOD RAW-PATH` that REGEX matches (searched), its first request gets the
first KIND, its second the second, and so on. Every matching file gets the same faults
whatever the order in which concurrent requests arrive: a deterministic share of files
failing a known number of times.
--mkcol-race SECONDS holds every MKCOL that long before forwarding it; a second MKCOL
of the same path while the first is held gets 409 and never reaches the server (what
some WebDAV servers answer when clients create one new folder at the same moment); it
is logged as `race 409`.
--ignore-ranges drops Range and If-Range from every request it forwards: the server
answers 200 with the whole file while it still says `Accept-Ranges: bytes`.
--keep-host forwards the client's Host header unchanged, so a request signed for the
proxy's address (S3 SigV4 signs Host) still checks out at a store that verifies it.
--deny-delete TEXT plays an S3 store whose policy forbids deleting some keys: from a
DeleteObjects request (POST ?delete) it leaves out every key containing TEXT before
forwarding it, and adds an AccessDenied <Error> for each to the store's answer. Logged
as `denied N STATUS`.
Kind 501 answers as an S3 store that lacks the operation: 501 with a NotImplemented
<Error> document.
--hold REGEX:N --gate DIR holds one request at a known point, whatever the machine's
speed: the first N requests whose `METHOD RAW-PATH` (followed by ` RANGE`, the Range
header's value, when there is one) matches REGEX pass; the next one is held (logged as
`held`, and DIR/held is written, naming it) and is forwarded only once DIR/release
exists; later ones pass again. A test waits for DIR/held, then kills the client in the
middle of that request: what the server has is exactly the first N.
A request whose body ends before its Content-Length (the client dropped the connection
part-way) reaches the server the same way: its headers and the bytes that came, then the
connection closed. Logged as `cut RECEIVED/LENGTH`; the client gets no answer.
--log FILE appends one line per request: `METHOD RAW-PATH OUTCOME`, where OUTCOME is
`ok STATUS`, `500`, `503`, `reset`, `delay STATUS` or `lost STATUS`, written before the
client gets its answer (a test that counts requests once it has an answer needs no wait).

Every answer closes its connection (no keep-alive), which keeps the proxy simple and
makes clients reconnect often.
"""
import argparse, base64, hashlib, http.client, os, random, re, socket, threading, time
from parent_watch import end_with_parent
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

KINDS = ["500", "503", "reset", "delay", "lost", "stall", "409", "conflict", "501", "403"]
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


def parse_arguments():
    parser = argparse.ArgumentParser(description="A fault-injecting HTTP proxy for tests.")
    parser.add_argument("upstream", help="the server's origin, e.g. http://127.0.0.1:8080")
    parser.add_argument("share", type=float, help="share of requests that get a fault, 0..1")
    parser.add_argument("seed", type=int, nargs="?", default=1, help="random seed (default 1)")
    parser.add_argument("--kinds", default="500,503,reset",
                        help=f"comma-separated fault kinds out of {','.join(KINDS)} (default 500,503,reset)")
    parser.add_argument("--script", action="append", default=[], metavar="METHOD=KIND,...",
                        help="fixed faults for the first requests of a method, in order (ok: none)")
    parser.add_argument("--path-script", action="append", default=[], metavar="REGEX=KIND,...",
                        help="fixed faults for the first requests of each METHOD RAW-PATH matching REGEX, in order")
    parser.add_argument("--log", help="append one line per request to this file")
    parser.add_argument("--mkcol-race", type=float, default=0, metavar="SECONDS",
                        help="hold each MKCOL this long before forwarding it; another MKCOL of the "
                             "same path meanwhile gets 409 without reaching the server")
    parser.add_argument("--ignore-ranges", action="store_true",
                        help="drop Range and If-Range from every request: the server answers 200 with the "
                             "whole file while it still says Accept-Ranges: bytes (a server that lies about ranges)")
    parser.add_argument("--keep-host", action="store_true",
                        help="forward the client's Host header unchanged (requests signed for the proxy's address)")
    parser.add_argument("--drop-metadata", action="store_true",
                        help="leave x-amz-meta-* headers out of every answer: a gateway that keeps no user metadata")
    parser.add_argument("--deny-delete", metavar="TEXT",
                        help="DeleteObjects: leave out keys containing TEXT and answer AccessDenied for each")
    parser.add_argument("--hold", metavar="REGEX:N",
                        help="hold the request after the first N whose `METHOD RAW-PATH [RANGE]` matches REGEX "
                             "until GATE/release exists (one request, once)")
    parser.add_argument("--gate", metavar="DIR", help="the folder of --hold's files: held (written), release (read)")
    arguments = parser.parse_args()
    if arguments.hold:
        pattern, _, count = arguments.hold.rpartition(":")
        if not pattern or not count.isdigit() or not arguments.gate:
            parser.error(f"--hold {arguments.hold}: expected REGEX:N, with --gate DIR")
        arguments.hold = (re.compile(pattern), int(count))
    scripts = {}
    for item in arguments.script:
        method, _, kinds = item.partition("=")
        scripts[method.strip().upper()] = [kind.strip() for kind in kinds.split(",") if kind.strip()]
        if not scripts[method.strip().upper()] or any(k not in KINDS + ["ok"] for k in scripts[method.strip().upper()]):
            parser.error(f"--script {item}: expected METHOD=KIND,... with KIND out of ok,{','.join(KINDS)}")
    arguments.script = scripts
    path_scripts = []
    for item in arguments.path_script:
        pattern, _, kinds = item.rpartition("=")
        kinds = [kind.strip() for kind in kinds.split(",") if kind.strip()]
        if not pattern or not kinds or any(k not in KINDS + ["ok"] for k in kinds):
            parser.error(f"--path-script {item}: expected REGEX=KIND,... with KIND out of ok,{','.join(KINDS)}")
        path_scripts.append((re.compile(pattern), kinds))
    arguments.path_script = path_scripts
    arguments.kinds = [kind.strip() for kind in arguments.kinds.split(",") if kind.strip()]
    unknown = [kind for kind in arguments.kinds if kind not in KINDS]
    if unknown or not arguments.kinds:
        parser.error(f"unknown fault kind(s) {unknown}; choose from {','.join(KINDS)}")
    return arguments


arguments = parse_arguments()
upstream = urlsplit(arguments.upstream)
rng = random.Random(arguments.seed)
lock = threading.Lock()
# MKCOLs held (with --mkcol-race), by path.
held_mkcols = set()
# Requests that matched --hold so far.
hold_matches = 0
# Requests seen so far per `METHOD RAW-PATH` that a --path-script matches.
path_script_counts = {}
log_file = open(arguments.log, "a", buffering=1) if arguments.log else None


def log(method, path, outcome):
    if log_file:
        with lock:
            log_file.write(f"{method} {path} {outcome}\n")


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = self.rfile.read(length) if length else None
        except ConnectionResetError:
            body = b""
        if body is not None and len(body) < length:
            return self.forward_cut(body, length)
        if arguments.hold:
            self.wait_at_gate()
        if self.command == "MKCOL" and arguments.mkcol_race > 0:
            return self.race_mkcol(body)
        with lock:
            roll = rng.random()
            kind = rng.choice(arguments.kinds)
            if roll >= arguments.share:
                kind = "ok"
            scripted = arguments.script.get(self.command)
            if scripted:
                kind = scripted.pop(0)
            line = f"{self.command} {self.path}"
            for pattern, kinds in arguments.path_script:
                if pattern.search(line):
                    seen = path_script_counts.get(line, 0)
                    path_script_counts[line] = seen + 1
                    if seen < len(kinds):
                        kind = kinds[seen]
                    break
            pause = rng.uniform(0.2, 1.0) if kind == "delay" else 0
        if kind == "ok" and arguments.deny_delete and self.command == "POST" and re.search(r"[?&]delete(=|&|$)", self.path):
            self.deny_delete(body)
        elif kind == "ok":
            self.forward_and_reply(body, "ok")
        elif kind == "reset":
            log(self.command, self.path, kind)
            self.drop(reset=True)
        elif kind in ("500", "503", "409", "403"):
            log(self.command, self.path, kind)
            self.send_response(int(kind))
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
        elif kind == "501":
            log(self.command, self.path, kind)
            payload = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code>'
                       b'<Message>A header or query you provided implies functionality that is not implemented.</Message></Error>')
            self.send_response(501)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
            self.close_connection = True
        elif kind == "delay":
            time.sleep(pause)
            self.forward_and_reply(body, "delay")
        elif kind == "stall":
            log(self.command, self.path, kind)
            time.sleep(60)
            self.drop(reset=False)
        elif kind == "conflict":
            (status, _), _, _ = self.forward(body)
            log(self.command, self.path, f"conflict {status}")
            self.send_response(409)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
        else:  # lost: the server does the work, the client never hears.
            (status, _), _, _ = self.forward(body)
            log(self.command, self.path, f"lost {status}")
            self.drop(reset=False)

    def wait_at_gate(self):
        global hold_matches
        pattern, count = arguments.hold
        line = f"{self.command} {self.path}"
        if self.headers.get("Range"):
            line += " " + self.headers.get("Range")
        if not pattern.search(line):
            return
        with lock:
            hold_matches += 1
            held = hold_matches == count + 1
        if not held:
            return
        log(self.command, self.path, "held")
        marker = os.path.join(arguments.gate, "held")
        with open(marker + ".part", "w") as f:
            f.write(line + "\n")
        os.rename(marker + ".part", marker)
        while not os.path.exists(os.path.join(arguments.gate, "release")):
            time.sleep(0.05)

    def deny_delete(self, body):
        """A DeleteObjects request where the store's policy forbids some keys: those are
        not deleted and come back as AccessDenied errors."""
        text = (body or b"").decode("utf-8")
        denied = []

        def keep(match):
            key = match.group(1)
            if arguments.deny_delete in key:
                denied.append(key)
                return ""
            return match.group(0)

        forwarded = re.sub(r"<Object><Key>(.*?)</Key></Object>", keep, text).encode("utf-8")
        self.replaced_md5 = base64.b64encode(hashlib.md5(forwarded).digest()).decode("ascii")
        (status, reason), headers, payload = self.forward(forwarded)
        if status == 200 and denied:
            errors = "".join(f"<Error><Key>{key}</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
                             for key in denied)
            answer = payload.decode("utf-8")
            if re.search(r"<DeleteResult[^>]*/>", answer):
                answer = re.sub(r"<DeleteResult([^>]*)/>", lambda m: f"<DeleteResult{m.group(1)}>{errors}</DeleteResult>", answer)
            else:
                answer = answer.replace("</DeleteResult>", errors + "</DeleteResult>")
            payload = answer.encode("utf-8")
        log(self.command, self.path, f"denied {len(denied)} {status}")
        self.send_response(status, reason)
        for key, value in headers:
            if key.lower() not in HOP and key.lower() != "content-length":
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True

    def race_mkcol(self, body):
        """What some servers do when clients create the same new folder at once: the
        second MKCOL of a path, while the first is still being handled, gets 409."""
        path = self.path.rstrip("/")
        with lock:
            racing = path in held_mkcols
            held_mkcols.add(path)
        if racing:
            log(self.command, self.path, "race 409")
            self.send_response(409)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            return
        try:
            time.sleep(arguments.mkcol_race)
            self.forward_and_reply(body, "ok")
        finally:
            with lock:
                held_mkcols.discard(path)

    def drop(self, reset):
        if reset:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self.close_connection = True
        self.connection.close()

    def forward_cut(self, body, length):
        """The client dropped the connection part-way through the body: the server gets
        the same cut (and closes its side, which is waited for)."""
        log(self.command, self.path, f"cut {len(body)}/{length}")
        headers = self.upstream_headers()
        lines = [f"{self.command} {self.path} HTTP/1.1"] + [f"{key}: {value}" for key, value in headers.items()]
        try:
            with socket.create_connection((upstream.hostname, upstream.port), timeout=10) as connection:
                connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
                connection.shutdown(socket.SHUT_WR)
                while connection.recv(65536):
                    pass
        except OSError:
            pass
        self.close_connection = True

    def upstream_headers(self):
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "host"}
        headers["Host"] = self.headers.get("Host") if arguments.keep_host else upstream.netloc
        return headers

    def forward(self, body):
        """Sends the request upstream; returns (status line, headers, payload)."""
        headers = self.upstream_headers()
        replaced_md5 = getattr(self, "replaced_md5", None)
        if replaced_md5:
            # A body rewritten by deny_delete: its own digest and length.
            headers = {k: v for k, v in headers.items() if k.lower() not in ("content-md5", "content-length")}
            headers["Content-MD5"] = replaced_md5
            headers["Content-Length"] = str(len(body))
        if arguments.ignore_ranges:
            headers = {k: v for k, v in headers.items() if k.lower() not in ("range", "if-range")}
        if "Destination" in headers:
            headers["Destination"] = headers["Destination"].replace(self.own_origin(), upstream_origin(), 1)
        connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
        try:
            connection.request(self.command, self.path, body=body, headers=headers)
            response = connection.getresponse()
            return (response.status, response.reason), response.getheaders(), response.read()
        finally:
            connection.close()

    def forward_and_reply(self, body, outcome):
        (status, reason), headers, payload = self.forward(body)
        # Logged before the client hears the answer: a test that counts requests once its
        # client has an answer finds every line there, with no waiting for a flush.
        log(self.command, self.path, f"{outcome} {status}")
        self.send_response(status, reason)
        for key, value in headers:
            if arguments.drop_metadata and key.lower().startswith("x-amz-meta-"):
                continue
            if key.lower() not in HOP and key.lower() != "content-length":
                self.send_header(key, value.replace(upstream_origin(), self.own_origin()))
        # A HEAD has no payload, but its Content-Length is the size of what a GET sends.
        length = dict((k.lower(), v) for k, v in headers).get("content-length", "0") if self.command == "HEAD" else len(payload)
        self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.close_connection = True
        return status

    def own_origin(self):
        return f"http://{self.headers.get('Host')}"


def upstream_origin():
    return f"{upstream.scheme}://{upstream.netloc}"


for method in ["GET", "HEAD", "PUT", "POST", "DELETE", "MKCOL", "MOVE", "COPY", "PROPFIND", "PROPPATCH", "OPTIONS"]:
    setattr(Proxy, "do_" + method, Proxy.handle_any)


end_with_parent()
server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
server.daemon_threads = True
print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
