"""schemathesis against docs/openapi.yaml and a running daemon on TCP (with its key): no
server error, no undocumented status, every answer matches its schema. Bounded: a few
examples per operation. The event stream and its long poll are left out (a stream never
ends; a long poll waits) and checked by test_api.py, and so is a reload (test_roles.py)."""
import os
import subprocess

from conftest import GUARD, ROOT, Daemon, write


def test_the_api_matches_its_openapi_document(workdir):
    write(f"{workdir}/photos/IMG_0001.jpg", os.urandom(2048))
    write(f"{workdir}/photos/.thumbnails/IMG_0001.jpg", os.urandom(512))
    os.makedirs(f"{workdir}/remote", exist_ok=True)
    daemon = Daemon(workdir, "remotes:\n  nas:\n    type: local\n    path: remote\n"
                             "folders:\n  photos:\n    path: photos\n    remote: nas\n", tcp=True).start()
    try:
        result = subprocess.run(
            ["schemathesis", "run", os.path.join(ROOT, "docs", "openapi.yaml"),
             "--url", f"http://127.0.0.1:{daemon.port}", "-H", f"X-API-Key: {daemon.key}",
             "--exclude-path-regex", "^/v1/(events|reload)", "--phases", "coverage,fuzzing",
             "--max-examples", os.environ.get("FERRY_SCHEMATHESIS_EXAMPLES", "8"),
             "--seed", "1", "--no-color"],
            cwd=workdir, capture_output=True, text=True, timeout=GUARD * 3)
        assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
        assert daemon.process.poll() is None, "the daemon died under schemathesis"
    finally:
        daemon.stop()
