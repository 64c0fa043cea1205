#!/usr/bin/env python3
"""A hostile WebDAV server for tests: it answers like a server, but lies in the ways no
real server does, to check that Ferry bounds what it takes from a remote.

Usage: hostile-server.py MODE [--log FILE] [options]
Prints `http://127.0.0.1:PORT` once listening; runs until killed. Loopback only. The
WebDAV folder is `/dav/`.

Modes:
  oversize  `/dav/` lists one file, `big.bin`, as `--listed` bytes (default 5); a GET of
            it streams `--body` bytes (default 64 MiB) of `x`, chunked (no length), or
            with a Content-Length of the true size with `--with-length`. HEAD and a
            Depth-0 PROPFIND give the listed size.
  deep      every folder lists one subfolder `d/` and one 3-byte file `f.txt`, without
            end (`--levels N` stops at N levels: the last lists no subfolder, deeper are 404).
  wide      every folder lists `--fanout` subfolders and `--fanout` 3-byte files, without
            end (`--levels N` as above).
  names     `/dav/` lists the files given by `--name` (repeatable, percent-encoded on
            the wire, each 3 bytes).
  put       every PUT is taken and answered 200 with the MD5 of its body as ETag, as an
            S3 store answers (no signature check); its log line ends with
            `expect=VALUE` when the request carried an Expect header, so a test sees
            what a client really sent.
  inplace   a working WebDAV server on the folder `--root` (PUT, GET, HEAD, PROPFIND,
            MKCOL, MOVE, COPY, DELETE; PROPPATCH 405, ranged PUT 501) whose PUT writes the
            body straight into the target file as it arrives, as some small servers do:
            a PUT cut off half-way leaves the part that came under the file's name (its
            log line says `cut RECEIVED/LENGTH`). One request at a time, and every
            connection is closed after its answer, so requests are handled in the order
            they are made.

`--log FILE` appends one line per request (`METHOD RAW-PATH STATUS BYTES-SENT`), written
before the answer's body, so a test that counts requests once it has an answer needs no
wait. Requests that never end (a streamed body cut off by the client) log `aborted`.
"""
import argparse, email.utils, hashlib, os, shutil, socket, threading
from parent_watch import end_with_parent
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from urllib.parse import quote, unquote, urlsplit

parser = argparse.ArgumentParser(description="A hostile WebDAV server for tests.")
parser.add_argument("mode", choices=["oversize", "deep", "wide", "names", "put", "inplace"])
parser.add_argument("--log", help="append one line per request to this file")
parser.add_argument("--listed", type=int, default=5, help="oversize: the size the listing gives")
parser.add_argument("--body", type=int, default=64 << 20, help="oversize: the bytes a GET streams")
parser.add_argument("--with-length", action="store_true", help="oversize: announce the true length")
parser.add_argument("--levels", type=int, default=0, help="deep, wide: the last level (0: no end)")
parser.add_argument("--fanout", type=int, default=50, help="wide: subfolders and files per folder")
parser.add_argument("--name", action="append", default=[], help="names: a file name to list")
parser.add_argument("--root", help="inplace: the folder served at /dav/")
arguments = parser.parse_args()

lock = threading.Lock()
log_file = open(arguments.log, "a", buffering=1) if arguments.log else None
MODIFIED = email.utils.formatdate(1_700_000_000, usegmt=True)


def log(method, path, status, sent, note=None):
    if log_file:
        with lock:
            log_file.write(f"{method} {path} {status} {sent}" + (f" {note}" if note else "") + "\n")


def response_xml(href, is_folder, size):
    kind = "<D:resourcetype><D:collection/></D:resourcetype>" if is_folder else "<D:resourcetype/>"
    length = "" if is_folder else f"<D:getcontentlength>{size}</D:getcontentlength>"
    return (f"<D:response><D:href>{href}</D:href><D:propstat><D:prop>{kind}{length}"
            f"<D:getlastmodified>{MODIFIED}</D:getlastmodified></D:prop>"
            f"<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")


def folder_depth(path):
    """Levels below /dav/ of a folder path such as /dav/d/d/ (0 for /dav/)."""
    return len([part for part in path[len("/dav/"):].split("/") if part])


def children(path):
    """(name, is_folder, size) of the folder at `path`, or None when it does not exist."""
    mode = arguments.mode
    if mode == "oversize":
        return [("big.bin", False, arguments.listed)] if path == "/dav/" else None
    if mode == "names":
        return [(name, False, 3) for name in arguments.name] if path == "/dav/" else None
    depth = folder_depth(path)
    if arguments.levels and depth > arguments.levels:
        return None
    # The last level lists files only.
    folders = not (arguments.levels and depth == arguments.levels)
    if mode == "deep":
        return ([("d", True, 0)] if folders else []) + [("f.txt", False, 3)]
    return ([(f"d{index}", True, 0) for index in range(arguments.fanout) if folders]
            + [(f"f{index}.txt", False, 3) for index in range(arguments.fanout)])


def file_size(path):
    """The listed size of the file at `path`, or None."""
    folder, _, name = path.rpartition("/")
    listed = children(folder + "/")
    for child, is_folder, size in listed or []:
        if not is_folder and child == unquote(name):
            return size
    return None


class Answering(BaseHTTPRequestHandler):
    """What both fake servers answer with: one log line per answer, and the body of a
    request read and dropped. `closes_connection` ends the connection after each answer."""
    protocol_version = "HTTP/1.1"
    closes_connection = False

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=(), length=None, note=None):
        log(self.command, self.path, status, len(body), note)
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        if self.closes_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        if self.closes_connection:
            self.close_connection = True

    def drain(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)


class Hostile(Answering):
    def setup(self):
        super().setup()
        # Headers and body go out in separate writes: without this, delayed ACKs make
        # every answer on a kept-alive connection wait 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_OPTIONS(self):
        self.drain()
        self.answer(200, headers=[("DAV", "1"), ("Allow", "OPTIONS, GET, HEAD, PROPFIND")])

    def do_PROPFIND(self):
        self.drain()
        path = self.path.split("?")[0]
        if path.endswith("/"):
            listed = children(unquote(path))
            if listed is None:
                return self.answer(404)
            parts = [response_xml(path, True, 0)]
            if self.headers.get("Depth", "1") != "0":
                for name, is_folder, size in listed:
                    parts.append(response_xml(path + quote(name) + ("/" if is_folder else ""), is_folder, size))
        else:
            size = file_size(unquote(path))
            if size is None:
                if children(unquote(path) + "/") is not None:
                    return self.answer(301, headers=[("Location", path + "/")])
                return self.answer(404)
            parts = [response_xml(path, False, size)]
        body = ('<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">'
                + "".join(parts) + "</D:multistatus>").encode()
        self.answer(207, body, [("Content-Type", "application/xml; charset=utf-8")])

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = unquote(self.path.split("?")[0])
        size = file_size(path)
        if size is None:
            return self.answer(404)
        if self.command == "HEAD":
            return self.answer(200, headers=[("Last-Modified", MODIFIED)], length=size)
        if arguments.mode != "oversize":
            return self.answer(200, b"x" * size, [("Last-Modified", MODIFIED)])
        # The lie: far more than the listing said.
        total = arguments.body
        log(self.command, self.path, 200, total)
        self.send_response(200)
        self.send_header("Last-Modified", MODIFIED)
        if arguments.with_length:
            self.send_header("Content-Length", str(total))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"x" * (1 << 16)
        sent = 0
        try:
            while sent < total:
                piece = chunk[:min(len(chunk), total - sent)]
                if arguments.with_length:
                    self.wfile.write(piece)
                else:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
            if not arguments.with_length:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            log(self.command, self.path, "aborted", sent)
            self.close_connection = True

    def refuse(self):
        self.drain()
        self.answer(403)

    do_PUT = do_DELETE = do_MKCOL = do_MOVE = do_COPY = do_PROPPATCH = do_POST = refuse

    def do_PUT(self):
        if arguments.mode != "put":
            return self.refuse()
        # The standard library answers `Expect: 100-continue` before this runs.
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        expect = self.headers.get("Expect")
        self.answer(200, headers=[("ETag", f'"{hashlib.md5(body).hexdigest()}"')],
                    note=f"expect={expect}" if expect else None)


class InPlace(Answering):
    """A plain WebDAV server whose PUT writes into the target file itself."""
    closes_connection = True

    def local(self, raw_path):
        """The file or folder under --root for a /dav/ path, or None outside it."""
        path = unquote(urlsplit(raw_path).path)
        if not path.startswith("/dav/") and path != "/dav":
            return None
        parts = [part for part in path[len("/dav"):].split("/") if part]
        if any(part in (".", "..") or "\0" in part for part in parts):
            return None
        return os.path.join(arguments.root, *parts)

    def do_OPTIONS(self):
        self.drain()
        self.answer(200, headers=[("DAV", "1"), ("Allow", "OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, MOVE, COPY, PROPFIND")])

    def do_PUT(self):
        target = self.local(self.path)
        if target is None or os.path.isdir(target):
            self.drain()
            return self.answer(409 if target else 403)
        if self.headers.get("Content-Range"):
            self.drain()
            return self.answer(501)
        if not os.path.isdir(os.path.dirname(target)):
            self.drain()
            return self.answer(409)
        existed = os.path.exists(target)
        length = int(self.headers.get("Content-Length") or 0)
        received = 0
        # The writing in place: the old content goes at once, each piece lands as it comes.
        with open(target, "wb") as f:
            while received < length:
                try:
                    piece = self.rfile.read1(min(1 << 16, length - received))
                except OSError:
                    piece = b""
                if not piece:
                    break
                f.write(piece)
                f.flush()
                received += len(piece)
        if received < length:
            log(self.command, self.path, f"cut {received}/{length}", 0)
            self.close_connection = True
            return
        self.answer(204 if existed else 201)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        target = self.local(self.path)
        if target is None or not os.path.isfile(target):
            return self.answer(404)
        with open(target, "rb") as f:
            body = f.read()
        stat = os.stat(target)
        headers = [("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True)), ("ETag", etag(stat))]
        if self.command == "HEAD":
            return self.answer(200, headers=headers, length=len(body))
        self.answer(200, body, headers)

    def do_PROPFIND(self):
        self.drain()
        target = self.local(self.path)
        if target is None or not os.path.exists(target):
            return self.answer(404)
        path = urlsplit(self.path).path
        if os.path.isdir(target):
            if not path.endswith("/"):
                path += "/"
            parts = [entry_xml(path, target)]
            if self.headers.get("Depth", "1") != "0":
                for name in sorted(os.listdir(target)):
                    child = os.path.join(target, name)
                    parts.append(entry_xml(path + quote(name) + ("/" if os.path.isdir(child) else ""), child))
        else:
            parts = [entry_xml(path, target)]
        body = ('<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">'
                + "".join(parts) + "</D:multistatus>").encode()
        self.answer(207, body, [("Content-Type", "application/xml; charset=utf-8")])

    def do_MKCOL(self):
        self.drain()
        target = self.local(self.path)
        if target is None:
            return self.answer(403)
        if os.path.exists(target):
            return self.answer(405)
        if not os.path.isdir(os.path.dirname(target.rstrip("/"))):
            return self.answer(409)
        os.mkdir(target)
        self.answer(201)

    def do_DELETE(self):
        self.drain()
        target = self.local(self.path)
        if target is None or not os.path.exists(target):
            return self.answer(404)
        if os.path.isdir(target):
            shutil.rmtree(target)
        else:
            os.remove(target)
        self.answer(204)

    def move_or_copy(self, move):
        self.drain()
        source = self.local(self.path)
        destination = self.local(self.headers.get("Destination") or "")
        if source is None or destination is None:
            return self.answer(403)
        if not os.path.exists(source):
            return self.answer(404)
        if not os.path.isdir(os.path.dirname(destination.rstrip("/"))):
            return self.answer(409)
        existed = os.path.exists(destination)
        if existed and self.headers.get("Overwrite", "T").upper() == "F":
            return self.answer(412)
        if move:
            os.replace(source, destination)
        else:
            shutil.copyfile(source, destination)
        self.answer(204 if existed else 201)

    def do_MOVE(self):
        self.move_or_copy(move=True)

    def do_COPY(self):
        self.move_or_copy(move=False)

    def do_PROPPATCH(self):
        self.drain()
        self.answer(405)

    do_POST = do_PROPPATCH


def etag(stat):
    return f'"{stat.st_size:x}-{stat.st_mtime_ns:x}"'


def entry_xml(href, local):
    stat = os.stat(local)
    folder = os.path.isdir(local)
    kind = "<D:resourcetype><D:collection/></D:resourcetype>" if folder else "<D:resourcetype/>"
    extra = "" if folder else f"<D:getcontentlength>{stat.st_size}</D:getcontentlength><D:getetag>{etag(stat)}</D:getetag>"
    return (f"<D:response><D:href>{href}</D:href><D:propstat><D:prop>{kind}{extra}"
            f"<D:getlastmodified>{email.utils.formatdate(stat.st_mtime, usegmt=True)}</D:getlastmodified></D:prop>"
            f"<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")


end_with_parent()
if arguments.mode == "inplace":
    if not arguments.root:
        parser.error("inplace needs --root DIR")
    os.makedirs(arguments.root, exist_ok=True)
    server = HTTPServer(("127.0.0.1", 0), InPlace)
else:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
server.daemon_threads = True
print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
