"""API keys with roles (docs/api.md, "Keys and roles"): read, control, admin; every route
tried with each (401 without a key, 403 beyond the role, through within it), keys made,
listed and revoked with `ferry api-key`, counting at once; the page with a read key shows
no button it could not use."""
import json
import os
import socket

from conftest import GUARD, Daemon, wait_for, write
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from test_page import browser, text_of

KiB = 1024

READS = ["/v1/status", "/v1/folders", "/v1/folders/photos", "/v1/schedules", "/v1/files?folder=photos",
         "/v1/items?folder=photos", "/v1/history", "/v1/history/transfers", "/v1/events/batch", "/v1/access", "/metrics"]
ACTIONS = [("/v1/folders/photos/run", {}), ("/v1/folders/photos/rescan", {}), ("/v1/folders/photos/pause", None),
           ("/v1/folders/photos/resume", None), ("/v1/folders/photos/retry", {}),
           ("/v1/folders/photos/resolve", {"path": "none.jpg", "keep": "local"}), ("/v1/folders/photos/accept-changes", {}),
           ("/v1/pause", None), ("/v1/resume", None)]


def start(workdir):
    write(f"{workdir}/photos/a.jpg", os.urandom(KiB), age=60)
    os.makedirs(f"{workdir}/remote", exist_ok=True)
    daemon = Daemon(workdir, "remotes:\n  nas:\n    type: local\n    path: remote\n"
                             "folders:\n  photos:\n    path: photos\n    remote: nas\n"
                             "watch:\n  quiet_period: 200ms\n", tcp=True)
    return daemon.start()


def add_key(daemon, name, role):
    made = daemon.ferry("api-key", "add", name, "--role", role, "--json", check=0)
    return json.loads(made.stdout)["key"]


def event_stream_status(daemon, key):
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=GUARD) as sock:
        sock.sendall(f"GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:{daemon.port}\r\nX-API-Key: {key}\r\n\r\n".encode())
        return sock.recv(4096).split(b"\r\n", 1)[0]


def test_every_route_with_every_role(workdir):
    daemon = start(workdir)
    try:
        keys = {"read": add_key(daemon, "wall", "read"), "control": add_key(daemon, "phone", "control"),
                "admin": daemon.key}
        host = {"Host": f"127.0.0.1:{daemon.port}"}

        def call(method, path, key, body=None):
            headers = dict(host)
            if key:
                headers["X-API-Key"] = key
            return daemon.request(method, path, body=body, headers=headers, tcp=True)

        for path in READS:
            assert call("GET", path, None)[0] == 401, path
            for role, key in keys.items():
                assert call("GET", path, key)[0] == 200, (path, role)
        for role, key in keys.items():
            assert event_stream_status(daemon, key) == b"HTTP/1.1 200 OK", role
        assert call("GET", "/v1/access", keys["read"])[1] == {"role": "read", "key": "wall", "actions": False}
        assert call("GET", "/v1/access", keys["control"])[1]["actions"] is True

        for path, body in ACTIONS:
            assert call("POST", path, None, body)[0] == 401, path
            status, answer = call("POST", path, keys["read"], body)
            assert status == 403, (path, status, answer)
            assert "has the role read" in answer["error"] and "needs the role control" in answer["error"], answer
            for role in ("control", "admin"):
                status, answer = call("POST", path, keys[role], body)
                assert status not in (401, 403), (path, role, status, answer)

        # A reload is admin's: over TCP with the admin key, and on the Unix socket (admin by its mode).
        assert call("POST", "/v1/reload", keys["control"])[0] == 403
        last = daemon.last_event_id()
        assert call("POST", "/v1/reload", keys["admin"])[0] == 202
        daemon.wait_for_event(last, lambda event: event["name"] == "reload", "the reload asked for over the API")
        assert daemon.post("/v1/reload")[0] == 202

        # Listed without their secrets; revoked at once, with no reload.
        listed = json.loads(daemon.ferry("api-key", "list", "--json", check=0).stdout)
        assert [(k["name"], k["role"]) for k in listed["keys"]] == [("default", "admin"), ("phone", "control"), ("wall", "read")]
        assert keys["read"] not in json.dumps(listed)
        daemon.ferry("api-key", "revoke", "wall", check=0)
        assert call("GET", "/v1/status", keys["read"])[0] == 401
        assert daemon.ferry("api-key", "revoke", "wall").returncode != 0
        assert daemon.ferry("api-key", "add", "bad name", "--role", "read").returncode == 2
        assert daemon.ferry("api-key", "add", "x", "--role", "owner").returncode == 2
        # A key file others can read is not used, and the list says so.
        stray = add_key(daemon, "stray", "admin")
        os.chmod(f"{daemon.state}/api-keys/stray", 0o644)
        assert call("GET", "/v1/status", stray)[0] == 401
        assert "can be read by others" in daemon.ferry("api-key", "list").stderr
    finally:
        daemon.stop()


def test_the_page_with_a_read_key_shows_no_buttons(workdir):
    daemon = start(workdir)
    driver = None
    try:
        read_key = add_key(daemon, "wall", "read")
        driver = browser(1280)
        wait = WebDriverWait(driver, GUARD, poll_frequency=0.05)
        driver.get(f"http://127.0.0.1:{daemon.port}/")
        key = wait.until(lambda d: d.find_element(By.ID, "key") if d.find_element(By.ID, "login").is_displayed() else None)
        key.send_keys(read_key, Keys.ENTER)
        wait.until(lambda d: text_of(d, "#live") == "live")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#folder-photos"))
        wait.until(lambda d: d.find_element(By.ID, "access").is_displayed())
        visible = [b.text for b in driver.find_elements(By.TAG_NAME, "button") if b.is_displayed()]
        assert visible == [], visible
        # The same page with the admin key has them.
        driver.execute_script("sessionStorage.clear()")
        driver.get(f"http://127.0.0.1:{daemon.port}/")
        key = wait.until(lambda d: d.find_element(By.ID, "key") if d.find_element(By.ID, "login").is_displayed() else None)
        key.send_keys(daemon.key, Keys.ENTER)
        wait.until(lambda d: "Run now" in [b.text for b in d.find_elements(By.TAG_NAME, "button") if b.is_displayed()])
        assert not driver.find_element(By.ID, "access").is_displayed()
    finally:
        if driver:
            driver.quit()
        daemon.stop()
