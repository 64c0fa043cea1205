"""The status page reads as the ferry command does (issue 51, "smaller things"): sizes in
binary units (KiB, MiB), times as 2026-12-05 08:40:12 +0100 (24 hours, with the zone),
why a run is under way in words (never "Running (start)"), and a folder that waits for
its run conditions says so instead of "Idle". In Debian's chromium, headless; the run is
held at a gate of the exec test plugin `faulty`, so the page is read while it runs."""
import os
import re

from conftest import GUARD, Daemon, held_store_remote, wait_for, write
from test_page import browser, text_of

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4}")


def test_the_page_reads_like_the_command(workdir, monkeypatch):
    power = os.path.join(workdir, "power")
    write(f"{power}/AC/type", b"Mains\n")
    write(f"{power}/AC/online", b"0\n")
    write(f"{power}/BAT0/type", b"Battery\n")
    write(f"{power}/BAT0/capacity", b"70\n")
    write(f"{power}/BAT0/status", b"Discharging\n")
    monkeypatch.setenv("FERRY_POWER_SUPPLY_ROOT", power)
    for index in range(3):
        write(f"{workdir}/media/clip-{index}.mp4", bytes([index]) * (300 * 1024), age=60)
    write(f"{workdir}/camera/IMG_1.jpg", os.urandom(1024))
    os.makedirs(f"{workdir}/remote-camera", exist_ok=True)
    config = ("remotes:\n" + held_store_remote("store", workdir, "clip-1.mp4")
              + "  nas:\n    type: local\n    path: remote-camera\n"
              + "folders:\n  media:\n    path: media\n    remote: store\n"
              + "  camera:\n    path: camera\n    remote: nas\n    when: { power: ac }\n"
              + "transfers:\n  max: 1\nwatch:\n  quiet_period: 200ms\n  condition_interval: 1s\n")
    daemon = Daemon(workdir, config, tcp=True).start()
    driver = None
    try:
        wait_for(lambda: os.path.exists(f"{workdir}/gates/held-clip-1.mp4"), "the held clip")
        driver = browser(1280)
        wait = WebDriverWait(driver, GUARD, poll_frequency=0.05)
        driver.get(f"http://127.0.0.1:{daemon.port}/")
        key = wait.until(lambda d: d.find_element(By.ID, "key") if d.find_element(By.ID, "login").is_displayed() else None)
        key.send_keys(daemon.key, Keys.ENTER)
        wait.until(lambda d: text_of(d, "#live") == "live")

        # The daemon's first run, held at the gate: said in words, sizes in binary units.
        wait.until(lambda d: text_of(d, "#folder-media .state").startswith("Running"))
        running = text_of(driver, "#folder-media .state")
        assert "(start)" not in running and "first run since the daemon started" in running, running
        numbers = '#folder-media [data-queue="media"] .numbers'
        wait.until(lambda d: "KiB" in text_of(d, numbers) or "MiB" in text_of(d, numbers))
        page = driver.find_element(By.TAG_NAME, "body").text
        assert not re.search(r"\d (kB|MB|GB)\b", page), page

        # Times with 24 hours and the zone.
        assert TIME.search(text_of(driver, "#daemon")), text_of(driver, "#daemon")

        # The folder on battery waits, and says so on its state line too.
        wait.until(lambda d: text_of(d, "#folder-camera .state").startswith("Waiting for its run conditions"))
        assert not os.path.exists(f"{workdir}/remote-camera/IMG_1.jpg")

        write(f"{workdir}/gates/release-clip-1.mp4", b"go\n")
        wait.until(lambda d: "last run " in text_of(d, "#folder-media .state"))
        assert TIME.search(text_of(driver, "#folder-media .state")), text_of(driver, "#folder-media .state")
    finally:
        if driver:
            driver.quit()
        daemon.stop()
