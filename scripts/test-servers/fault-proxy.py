#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for tests: forwards every request to an upstream server,
except a chosen share, which get a 500 or 503 answer or a dropped connection instead.

Usage: fault-proxy.py UPSTREAM_ORIGIN SHARE [SEED]
  e.g. fault-proxy.py http://127.0.0.1:8080 0.2
Prints `http://127.0.0.1:PORT` once listening; runs until killed. Loopback only.
Faults are injected before the request reaches the server, so the server never sees a
refused request. Every answer closes its connection (no keep-alive), which keeps the
proxy simple and makes clients reconnect often.
"""
import http.client, random, socket, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

upstream = urlsplit(sys.argv[1])
share = float(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
lock = threading.Lock()
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        with lock:
            roll = rng.random()
            kind = rng.choice(["500", "503", "reset"])
        if roll < share:
            if kind == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.close_connection = True
                self.connection.close()
                return
            self.send_response(int(kind))
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "host"}
        headers["Host"] = upstream.netloc
        own = f"http://{self.headers.get('Host')}"
        if "Destination" in headers:
            headers["Destination"] = headers["Destination"].replace(own, f"{upstream.scheme}://{upstream.netloc}", 1)
        connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
        connection.request(self.command, self.path, body=body, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        self.send_response(response.status, response.reason)
        for key, value in response.getheaders():
            if key.lower() not in HOP and key.lower() != "content-length":
                self.send_header(key, value.replace(f"{upstream.scheme}://{upstream.netloc}", own))
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.close_connection = True
        connection.close()


for method in ["GET", "HEAD", "PUT", "POST", "DELETE", "MKCOL", "MOVE", "COPY", "PROPFIND", "PROPPATCH", "OPTIONS"]:
    setattr(Proxy, "do_" + method, Proxy.handle_any)

server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
server.daemon_threads = True
print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
