"""The status page lists a folder's files from the journal, so it answers when the remote
is offline (issue 51, "Offline views"): pushed to nginx, nginx stopped, the daemon started;
the page shows the offline banner, and the folder's Files list has every file with its
size and state (one still to send), said to be as of the last run. In Debian's chromium,
headless."""
import os
import subprocess

from conftest import GUARD, ROOT, Daemon, wait_for, write
from test_page import browser, text_of

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SERVERS = os.path.join(ROOT, "scripts", "test-servers")
NAMES = [f"DCIM/IMG_{index:04d}.jpg" for index in range(60)]


def test_the_files_list_answers_with_the_remote_offline(workdir):
    nginx = os.path.join(workdir, "nginx")
    url = subprocess.run(["bash", os.path.join(SERVERS, "start-nginx.sh"), nginx], capture_output=True, text=True,
                         check=True, timeout=GUARD).stdout.strip()
    daemon = None
    driver = None
    try:
        for name in NAMES:
            write(f"{workdir}/photos/{name}", os.urandom(2048), age=60)
        config = (f"remotes:\n  nas:\n    type: webdav\n    url: {url}/dav/\n"
                  "folders:\n  photos:\n    path: photos\n    remote: nas\n    remote_path: photos\n")
        daemon = Daemon(workdir, config, tcp=True)
        daemon.ferry("push", "photos", check=0)
        subprocess.run(["bash", os.path.join(SERVERS, "stop.sh"), nginx], check=True, timeout=GUARD)
        # A file to send, so that the daemon's first run finds the server gone.
        write(f"{workdir}/photos/zzz-new.jpg", os.urandom(1024), age=60)
        daemon.start()
        wait_for(lambda: daemon.folder("photos")["offline"], "the folder to be offline")

        driver = browser(1280)
        wait = WebDriverWait(driver, GUARD, poll_frequency=0.05)
        driver.get(f"http://127.0.0.1:{daemon.port}/")
        key = wait.until(lambda d: d.find_element(By.ID, "key") if d.find_element(By.ID, "login").is_displayed() else None)
        key.send_keys(daemon.key, Keys.ENTER)
        wait.until(lambda d: "Remote offline" in text_of(d, "#folder-photos .banner"))
        driver.find_element(By.CSS_SELECTOR, "#files-photos summary").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#files-photos li")) == 50)
        assert "offline" in text_of(driver, "#files-photos .browse-note")
        assert "2.00 KiB, inSync" in text_of(driver, "#files-photos li")
        # The rest on the next page.
        driver.find_element(By.CSS_SELECTOR, "#files-photos button.more").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#files-photos li")) == 61)
        listed = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#files-photos li .path")]
        assert listed == NAMES + ["zzz-new.jpg"]
        assert not driver.find_element(By.CSS_SELECTOR, "#files-photos button.more").is_displayed()
        os.makedirs(os.path.join(ROOT, ".build", "screenshots"), exist_ok=True)
        driver.save_screenshot(os.path.join(ROOT, ".build", "screenshots", "status-offline-files.png"))
    finally:
        if driver:
            driver.quit()
        if daemon:
            daemon.stop()
        subprocess.run(["bash", os.path.join(SERVERS, "stop.sh"), nginx], timeout=GUARD)
