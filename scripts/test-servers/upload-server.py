#!/usr/bin/env python3
"""A small read-write HTTP file server with a multipart upload endpoint, the way photo
servers take uploads, for the tests of Ferry's HTTP backend. Standard library only.

Usage: upload-server.py CONF
  CONF is the KEY=VALUE file start-upload.sh writes (port, root, tmp, token_file,
  pid_file, access_log, error_log). Naming it on the command line lets stop.sh recognise
  this process. The server detaches (setsid), writes its pid file once listening, and
  runs until SIGTERM.

Serves the folder `root` at `/`:
- GET/HEAD of a file: Content-Length, Last-Modified, a strong ETag, Accept-Ranges; one
  byte range (`bytes=N-M`, `N-`, `-N`), honoured only if `If-Range` (an ETag or the
  Last-Modified date) still matches; 416 for a range beyond the end.
- GET/HEAD of a folder: with a trailing slash, an HTML index like `python3 -m http.server`
  writes (every name, hidden ones too, folders with a `/`); without it, 301 to it.
- POST /upload, multipart/form-data: the file in the field `file` and the target in the
  field `path` (or the query parameter `path`): the file's URL path, decoded, e.g.
  `/photos/a b.jpg`. The file is streamed to `tmp`, then renamed into place (atomic);
  missing folders are created. 201 with a small JSON body.
- DELETE of a file, or of an empty folder (409 when not empty); MKCOL of a folder (405
  when it exists, 409 when its parent is missing).
- Nothing else: MOVE and PUT get 501, like most upload endpoints.
Paths with `.` or `..` segments, NUL, backslashes or broken UTF-8 are refused (400).

Every request except the readiness probe (/.ferry-server-id) is logged to `access_log`
as `METHOD RAW-URI STATUS BODY-BYTES`, like the nginx and Apache test servers.
"""
import email.utils, html, json, os, re, sys, tempfile, threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

CHUNK = 1 << 16
MAX_PART_HEADERS = 16 * 1024
MAX_FIELD = 64 * 1024


def read_conf(path):
    conf = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                key, _, value = line.partition("=")
                conf[key] = value
    return conf


class BadRequest(Exception):
    """A request that is refused with 400 and the connection closed."""


def segments_of(url_path):
    """The decoded segments of a URL path and whether it ends with a slash; raises
    BadRequest for anything that could leave the root."""
    try:
        decoded = unquote(url_path, errors="strict")
    except UnicodeDecodeError:
        raise BadRequest("the path is not UTF-8")
    if "\0" in decoded or "\\" in decoded:
        raise BadRequest("NUL or backslash in the path")
    if not decoded.startswith("/"):
        raise BadRequest("the path is not absolute")
    parts = decoded.split("/")[1:]
    trailing = decoded.endswith("/")
    segments = [part for part in parts if part != ""]
    if any(part in (".", "..") for part in segments):
        raise BadRequest("a . or .. segment in the path")
    return segments, trailing


class MultipartStream:
    """Reads a multipart body of known length in chunks, handing what lies before a
    delimiter to a sink, so a part of any size goes straight to disk."""

    def __init__(self, rfile, length):
        self.rfile = rfile
        self.remaining = length
        self.buffer = b""

    def _fill(self):
        if self.remaining <= 0:
            raise BadRequest("the multipart body ends early")
        chunk = self.rfile.read(min(self.remaining, CHUNK))
        if not chunk:
            raise BadRequest("the connection closed inside the body")
        self.remaining -= len(chunk)
        self.buffer += chunk

    def read_until(self, delimiter, sink, limit=None):
        """Passes everything up to `delimiter` to `sink` and consumes the delimiter."""
        passed = 0
        while True:
            found = self.buffer.find(delimiter)
            if found >= 0:
                head, self.buffer = self.buffer[:found], self.buffer[found + len(delimiter):]
                passed += len(head)
                if limit is not None and passed > limit:
                    raise BadRequest("a multipart header or field is too long")
                sink(head)
                return
            # Keep what could be the start of a delimiter split across two reads.
            keep = len(delimiter) - 1
            if len(self.buffer) > keep:
                head, self.buffer = self.buffer[:len(self.buffer) - keep], self.buffer[len(self.buffer) - keep:]
                passed += len(head)
                if limit is not None and passed > limit:
                    raise BadRequest("a multipart header or field is too long")
                sink(head)
            self._fill()

    def read_exact(self, count):
        while len(self.buffer) < count:
            self._fill()
        head, self.buffer = self.buffer[:count], self.buffer[count:]
        return head

    def drain(self):
        while self.remaining > 0:
            chunk = self.rfile.read(min(self.remaining, CHUNK))
            if not chunk:
                break
            self.remaining -= len(chunk)
        self.buffer = b""


DISPOSITION_PARAM = re.compile(r';\s*(name|filename)="([^"]*)"', re.IGNORECASE)


def parse_multipart(stream, boundary, file_field, tmp_dir):
    """Returns (fields, temp_file_path or None). Text fields are decoded as UTF-8."""
    delimiter = b"\r\n--" + boundary
    # The first delimiter may open the body without a CRLF before it.
    stream.buffer = b"\r\n" + stream.buffer
    stream.read_until(delimiter, lambda _: None)
    fields, file_path = {}, None
    try:
        while True:
            after = stream.read_exact(2)
            if after == b"--":
                break
            if after != b"\r\n":
                raise BadRequest("garbage after a multipart delimiter")
            raw_headers = bytearray()
            stream.read_until(b"\r\n\r\n", raw_headers.extend, limit=MAX_PART_HEADERS)
            disposition = ""
            for line in raw_headers.decode("utf-8", errors="strict").split("\r\n"):
                key, _, value = line.partition(":")
                if key.strip().lower() == "content-disposition":
                    disposition = value.strip()
            if not disposition.lower().startswith("form-data"):
                raise BadRequest("a part without Content-Disposition: form-data")
            params = {key.lower(): value for key, value in DISPOSITION_PARAM.findall(disposition)}
            name = params.get("name")
            if name is None:
                raise BadRequest("a part without a name")
            if "filename" in params:
                if name != file_field or file_path is not None:
                    raise BadRequest(f"unexpected file part {name!r}")
                handle, file_path = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
                with os.fdopen(handle, "wb") as out:
                    stream.read_until(delimiter, out.write)
            else:
                value = bytearray()
                stream.read_until(delimiter, value.extend, limit=MAX_FIELD)
                fields[name] = value.decode("utf-8", errors="strict")
        stream.drain()
    except BaseException:
        if file_path is not None:
            os.unlink(file_path)
        raise
    return fields, file_path


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FerryUploadServer/1"
    body_length = 0

    # --- logging -------------------------------------------------------------------

    def log_request(self, code="-", size="-"):
        path = getattr(self, "path", "-")
        if path == "/.ferry-server-id":
            return
        line = f"{self.command or '-'} {path} {int(code)} {self.body_length}\n"
        with self.server.log_lock:
            with open(self.server.conf["access_log"], "a", encoding="utf-8", errors="replace") as log:
                log.write(line)

    def log_message(self, format, *args):
        with self.server.log_lock:
            with open(self.server.conf["error_log"], "a", encoding="utf-8", errors="replace") as log:
                log.write("%s %s\n" % (self.log_date_time_string(), format % args))

    # --- helpers -------------------------------------------------------------------

    def local_path(self, segments):
        return os.path.join(self.server.root, *segments)

    def answer(self, status, body=b"", headers=(), close=False):
        self.body_length = len(body) if self.command != "HEAD" else 0
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def refuse(self, status, message):
        """An error answer; the connection closes, since a request body may be unread."""
        self.answer(status, (message + "\n").encode(), [("Content-Type", "text/plain; charset=utf-8")], close=True)

    # --- GET and HEAD --------------------------------------------------------------

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.path == "/.ferry-server-id":
            self.answer(200, self.server.token.encode(), [("Content-Type", "text/plain")])
            return
        try:
            segments, trailing = segments_of(urlsplit(self.path).path)
        except BadRequest as error:
            self.refuse(400, str(error))
            return
        path = self.local_path(segments)
        if os.path.isdir(path):
            if not trailing:
                location = quote("/" + "/".join(segments) + "/")
                self.answer(301, headers=[("Location", location)])
                return
            self.send_index(path, segments)
            return
        if trailing or not os.path.isfile(path):
            self.refuse(404, "not found")
            return
        self.send_file(path)

    def send_index(self, path, segments):
        try:
            names = os.listdir(path)
        except OSError:
            self.refuse(403, "cannot list this folder")
            return
        names.sort(key=lambda name: name.lower())
        display = html.escape("/" + "/".join(segments) + ("/" if segments else ""), quote=False)
        lines = [
            "<!DOCTYPE HTML>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            f"<title>Directory listing for {display}</title>", "</head>", "<body>",
            f"<h1>Directory listing for {display}</h1>", "<hr>", "<ul>",
        ]
        for name in names:
            shown = name + ("/" if os.path.isdir(os.path.join(path, name)) else "")
            lines.append(f'<li><a href="{quote(shown, errors="surrogatepass")}">{html.escape(shown, quote=False)}</a></li>')
        lines += ["</ul>", "<hr>", "</body>", "</html>", ""]
        body = "\n".join(lines).encode("utf-8", "surrogateescape")
        self.answer(200, body, [("Content-Type", "text/html; charset=utf-8")])

    def send_file(self, path):
        try:
            handle = open(path, "rb")
        except OSError:
            self.refuse(404, "not found")
            return
        with handle:
            info = os.fstat(handle.fileno())
            size = info.st_size
            etag = f'"{info.st_mtime_ns:x}-{size:x}"'
            modified = email.utils.formatdate(info.st_mtime, usegmt=True)
            headers = [("Content-Type", "application/octet-stream"), ("Last-Modified", modified),
                       ("ETag", etag), ("Accept-Ranges", "bytes")]
            start, end = 0, size - 1
            status = 200
            wanted = self.headers.get("Range")
            validator = self.headers.get("If-Range")
            if wanted and (validator is None or validator.strip() in (etag, modified)):
                match = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", wanted)
                if match and (match.group(1) or match.group(2)):
                    first, last = match.group(1), match.group(2)
                    if first:
                        start = int(first)
                        end = min(int(last), size - 1) if last else size - 1
                    else:
                        start = max(0, size - int(last))
                    if start >= size or start > end:
                        self.answer(416, headers=[("Content-Range", f"bytes */{size}")])
                        return
                    status = 206
                    headers.append(("Content-Range", f"bytes {start}-{end}/{size}"))
            length = max(0, end - start + 1)
            self.body_length = length if self.command != "HEAD" else 0
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(length))
            self.end_headers()
            if self.command == "HEAD":
                return
            handle.seek(start)
            left = length
            while left > 0:
                chunk = handle.read(min(left, CHUNK))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)

    # --- POST /upload --------------------------------------------------------------

    def do_POST(self):
        target = urlsplit(self.path)
        if target.path != "/upload":
            self.refuse(404, "uploads go to /upload")
            return
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            self.refuse(411, "a Content-Length is required")
            return
        match = re.search(r'boundary="?([^";]+)"?', self.headers.get("Content-Type", ""))
        if not self.headers.get("Content-Type", "").lower().startswith("multipart/form-data") or not match:
            self.refuse(415, "expected multipart/form-data with a boundary")
            return
        stream = MultipartStream(self.rfile, int(length))
        try:
            fields, temporary = parse_multipart(stream, match.group(1).encode("latin-1"), self.server.file_field,
                                                self.server.tmp)
        except (BadRequest, UnicodeDecodeError) as error:
            self.refuse(400, f"bad multipart body: {error}")
            return
        try:
            if temporary is None:
                raise BadRequest(f"no file in the field {self.server.file_field!r}")
            wanted = fields.get("path") or (parse_qs(target.query).get("path") or [None])[0]
            if not wanted:
                raise BadRequest("no target: give the form field or query parameter 'path'")
            segments, trailing = segments_of(quote(wanted if wanted.startswith("/") else "/" + wanted))
            if not segments or trailing:
                raise BadRequest("the target must name a file")
            destination = self.local_path(segments)
            try:
                os.makedirs(os.path.dirname(destination), exist_ok=True)
                if os.path.isdir(destination):
                    raise IsADirectoryError(destination)
                os.replace(temporary, destination)
                temporary = None
            except OSError as error:
                self.refuse(409, f"cannot store the file there: {error.strerror}")
                return
        except BadRequest as error:
            self.refuse(400, str(error))
            return
        finally:
            if temporary is not None:
                os.unlink(temporary)
        size = os.path.getsize(destination)
        body = json.dumps({"path": "/" + "/".join(segments), "size": size}).encode()
        self.answer(201, body, [("Content-Type", "application/json")])

    # --- DELETE and MKCOL ----------------------------------------------------------

    def do_DELETE(self):
        try:
            segments, _ = segments_of(urlsplit(self.path).path)
        except BadRequest as error:
            self.refuse(400, str(error))
            return
        if not segments:
            self.refuse(403, "the root cannot be deleted")
            return
        path = self.local_path(segments)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)
            else:
                os.unlink(path)
        except FileNotFoundError:
            self.refuse(404, "not found")
            return
        except OSError as error:
            self.refuse(409, f"cannot delete: {error.strerror}")
            return
        self.answer(204)

    def do_MKCOL(self):
        try:
            segments, _ = segments_of(urlsplit(self.path).path)
        except BadRequest as error:
            self.refuse(400, str(error))
            return
        path = self.local_path(segments)
        if os.path.exists(path):
            self.refuse(405, "it exists already")
            return
        if not os.path.isdir(os.path.dirname(path)):
            self.refuse(409, "the parent folder does not exist")
            return
        try:
            os.mkdir(path)
        except OSError as error:
            self.refuse(409, f"cannot create: {error.strerror}")
            return
        self.answer(201)


def main():
    conf = read_conf(sys.argv[1])
    server = ThreadingHTTPServer(("127.0.0.1", int(conf["port"])), Handler)
    server.daemon_threads = True
    server.conf = conf
    server.root = conf["root"]
    server.tmp = conf["tmp"]
    server.file_field = conf.get("file_field", "file")
    server.log_lock = threading.Lock()
    with open(conf["token_file"], encoding="utf-8") as handle:
        server.token = handle.read().strip()
    # Its own session and process group, so stop.sh can signal it and anything it left
    # (setsid fails only when it already leads a group, which is as good).
    try:
        os.setsid()
    except OSError:
        pass
    with open(conf["pid_file"], "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    server.serve_forever()


if __name__ == "__main__":
    main()
