"""Holds in the daemon (docs/config.md, "holds"): a run that would replace photos with
encrypted-looking bytes is held before its first write; the hold shows in /v1/status, in
/metrics and on the page; a read key cannot accept it (no button, 403), a control key can
(the page's "Accept changes"), and the run then goes through."""
import json
import os

from conftest import GUARD, Daemon, write
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from test_page import browser

KiB = 1024


def photo(seed):
    return b"\xff\xd8\xff\xe1" + os.urandom(6 * KiB)


def remote_files(directory):
    found = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, directory)
            if relative.split(os.sep)[0].startswith(".ferry"):
                continue
            with open(path, "rb") as f:
                found[relative] = f.read()
    return found


def test_a_held_run_waits_for_a_control_key(workdir):
    names = [f"IMG_{index:03d}.jpg" for index in range(60)]
    for index, name in enumerate(names):
        write(f"{workdir}/photos/{name}", photo(index), age=60)
    os.makedirs(f"{workdir}/remote", exist_ok=True)
    daemon = Daemon(workdir, "remotes:\n  nas:\n    type: local\n    path: remote\n"
                             "folders:\n  photos:\n    path: photos\n    remote: nas\n"
                             "watch:\n  quiet_period: 200ms\n", tcp=True)
    daemon.start()
    try:
        host = {"Host": f"127.0.0.1:{daemon.port}"}

        def call(method, path, key, body=None):
            return daemon.request(method, path, body=body if body is not None else {}, headers={**host, "X-API-Key": key},
                                  tcp=True)

        daemon.wait_for_event(0, lambda event: event["name"] == "run_ended" and event["data"].get("error") is None
                              and event["data"].get("stopped") is False, "the first push")
        before = remote_files(f"{workdir}/remote")
        assert sorted(before) == names

        # Paused while the files are rewritten, so no run sees half of them.
        assert daemon.post("/v1/folders/photos/pause")[0] == 200
        for name in names:
            write(f"{workdir}/photos/{name}", os.urandom(6 * KiB + 100), age=60)
        last = daemon.last_event_id()
        assert daemon.post("/v1/folders/photos/resume")[0] == 200
        held, _ = daemon.wait_for_event(last, lambda event: event["name"] == "run_ended" and event["data"].get("held"),
                                        "the held run")
        assert held["data"]["held"] == "encrypted_looking", held
        assert remote_files(f"{workdir}/remote") == before

        folder = daemon.folder("photos")
        assert folder["hold"]["reason"] == "encrypted_looking", folder
        assert "look encrypted" in folder["hold"]["message"]
        status, metrics = daemon.get("/metrics")
        assert status == 200
        assert 'ferry_folder_held{folder="photos"} 1' in metrics, metrics

        wall = json.loads(daemon.ferry("api-key", "add", "wall", "--role", "read", "--json", check=0).stdout)["key"]
        phone = json.loads(daemon.ferry("api-key", "add", "phone", "--role", "control", "--json", check=0).stdout)["key"]
        status, answer = call("POST", "/v1/folders/photos/accept-changes", wall)
        assert status == 403 and "needs the role control" in answer["error"], answer
        assert daemon.folder("photos")["hold"] is not None

        driver = browser(1280)
        try:
            wait = WebDriverWait(driver, GUARD, poll_frequency=0.05)

            def open_page(key):
                # A fresh login each time: the page keeps its key for the tab's session.
                driver.get(f"http://127.0.0.1:{daemon.port}/")
                driver.execute_script("sessionStorage.clear()")
                driver.get(f"http://127.0.0.1:{daemon.port}/")
                field = wait.until(lambda d: d.find_element(By.ID, "key") if d.find_element(By.ID, "login").is_displayed() else None)
                field.send_keys(key, Keys.ENTER)
                return wait.until(lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, "#folder-photos .hold")
                                                  if e.is_displayed()), None))

            hold = open_page(wall)
            assert "Held since" in hold.text and "look encrypted" in hold.text, hold.text
            wait.until(lambda d: d.find_element(By.ID, "access").is_displayed())
            assert [b.text for b in driver.find_elements(By.TAG_NAME, "button") if b.is_displayed()] == []

            last = daemon.last_event_id()
            hold = open_page(phone)
            accept = wait.until(lambda d: next((b for b in hold.find_elements(By.TAG_NAME, "button")
                                                if b.is_displayed() and b.text == "Accept changes"), None))
            accept.click()
            ended, _ = daemon.wait_for_event(last, lambda event: event["name"] == "run_ended"
                                             and event["data"].get("error") is None and event["data"].get("stopped") is False,
                                             "the accepted run")
            wait.until(lambda d: not d.find_element(By.CSS_SELECTOR, "#folder-photos .hold").is_displayed())
        finally:
            driver.quit()
        assert ended["data"].get("held") is None
        assert daemon.folder("photos")["hold"] is None
        assert remote_files(f"{workdir}/remote") == remote_files(f"{workdir}/photos")
        assert 'ferry_folder_held{folder="photos"} 0' in daemon.get("/metrics")[1]

        # Nothing is held now: there is nothing to accept.
        status, answer = call("POST", "/v1/folders/photos/accept-changes", phone)
        assert status == 409 and "not held" in answer["error"], answer
    finally:
        daemon.stop()
