"""The control API over TLS: the daemon terminates HTTPS itself (swift-nio-ssl) when
`tls_certificate` and `tls_key` are set. Checked on loopback with a certificate made for
the test: the key is still needed, the Origin must be https, plain HTTP gets nowhere."""
import http.client
import os
import ssl
import subprocess

from conftest import Daemon, free_port, wait_for, write


def test_https_with_the_key(workdir):
    certificate, key = f"{workdir}/cert.pem", f"{workdir}/key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate],
                   check=True, capture_output=True)
    os.chmod(key, 0o600)
    write(f"{workdir}/photos/a.jpg", b"x" * 100)
    os.makedirs(f"{workdir}/remote", exist_ok=True)
    port = free_port()
    daemon = Daemon(workdir, "remotes:\n  nas:\n    type: local\n    path: remote\n"
                             "folders:\n  photos:\n    path: photos\n    remote: nas\n"
                             f"daemon:\n  listen: 127.0.0.1:{port}\n  tls_certificate: cert.pem\n  tls_key: key.pem\n")
    daemon.start()
    try:
        context = ssl.create_default_context(cafile=certificate)

        def get(path, headers):
            connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read()
            connection.close()
            return response.status, body

        def answers():
            try:
                return get("/", {})[0] == 200
            except OSError:
                return False

        wait_for(answers, "the daemon's HTTPS address")
        host = {"Host": f"127.0.0.1:{port}"}
        assert get("/v1/status", host)[0] == 401
        status, body = get("/v1/status", {**host, "X-API-Key": daemon.key})
        assert status == 200 and b'"folders"' in body
        assert get("/v1/status", {**host, "X-API-Key": daemon.key, "Origin": f"http://127.0.0.1:{port}"})[0] == 403
        assert get("/v1/status", {**host, "X-API-Key": daemon.key, "Origin": f"https://127.0.0.1:{port}"})[0] == 200
        # Plain HTTP on the TLS port: no answer worth the name.
        plain = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            plain.request("GET", "/v1/status", headers={**host, "X-API-Key": daemon.key})
            assert plain.getresponse().status != 200
        except (OSError, http.client.HTTPException):
            pass
    finally:
        daemon.stop()
