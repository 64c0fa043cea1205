"""The status page in a real browser (Debian's chromium, headless, driven by selenium):
behind the API key (the login prompt), a folder's progress moving through a held push,
a failed file retried from the page, a conflict answered from the page, pause and resume
by keyboard (the buttons reached with Tab), an offline remote's banner. Screenshots at 1280 and 360 px wide go to .build/screenshots/ (not
committed) for a person to look at.

The push goes through the exec test plugin `faulty`, which holds two uploads until the
test writes their release files: the page is looked at while the run stands at each gate,
whatever the machine's speed (no throttle to outrace)."""
import os
import shutil

from conftest import GUARD, ROOT, Daemon, free_port, held_store_remote, read_or_none, wait_for, write

# Installed by scripts/bootstrap.sh test: a missing browser driver is a failure, not a skip.
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SHOTS = os.environ.get("FERRY_SCREENSHOTS") or os.path.join(ROOT, ".build", "screenshots")
CLIPS = [f"clip-{index:02d}.mp4" for index in range(6)]


def browser(width):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},900", "--lang=en-GB"):
        options.add_argument(argument)
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_window_size(width, 900)
    return driver


def press(driver, selector, keyboard=False):
    """Clicks (or focuses and presses Enter on) the element, finding it again if the page
    drew its list anew between finding and pressing (a live page redraws on events)."""
    def attempt(d):
        try:
            element = d.find_element(By.CSS_SELECTOR, selector)
            if keyboard:
                d.execute_script("arguments[0].focus()", element)
                d.switch_to.active_element.send_keys(Keys.ENTER)
            else:
                element.click()
            return True
        except StaleElementReferenceException:
            return False
    WebDriverWait(driver, GUARD, poll_frequency=0.05).until(attempt)


def text_of(driver, selector):
    elements = driver.find_elements(By.CSS_SELECTOR, selector)
    return elements[0].text if elements else ""


def until_text(wait, daemon, selector, check, what):
    """Waits for the element's text to pass `check`. On a hang it fails with what the page
    showed and what the daemon's own status said, so that a failure tells the two apart."""
    seen = [""]

    def probe(driver):
        seen[0] = text_of(driver, selector)
        return check(seen[0])
    try:
        wait.until(probe)
    except TimeoutException:
        raise AssertionError(f"waited {GUARD} s for {what}: {selector} reads {seen[0]!r}; "
                             f"the daemon's /v1/folders/media: {daemon.get('/v1/folders/media')}") from None


def test_the_status_page(workdir):
    # Made a minute ago: the daemon's first run takes all six. Written just before it
    # starts, some would be within the quiet period, left out of the plan and only join
    # the run once settled, so the gate could come before the count read six.
    for index, name in enumerate(CLIPS):
        write(f"{workdir}/media/{name}", bytes([index]) * (256 * 1024), age=60)
    write(f"{workdir}/broken/blocked/IMG_1.jpg", os.urandom(4096))
    write(f"{workdir}/remote-broken/blocked", b"a file where a folder should be\n")
    write(f"{workdir}/shared/a.txt", b"first\n")
    os.makedirs(f"{workdir}/remote-shared", exist_ok=True)
    os.makedirs(f"{workdir}/gone", exist_ok=True)
    config = ("remotes:\n" + held_store_remote("store", workdir, "clip-02.mp4,clip-05.mp4")
              + "  broken-remote:\n    type: local\n    path: remote-broken\n"
              + "  shared-remote:\n    type: local\n    path: remote-shared\n"
              + f"  gone-remote:\n    type: webdav\n    url: http://127.0.0.1:{free_port()}/dav/\n"
              + "folders:\n  media:\n    path: media\n    remote: store\n"
              + "  broken:\n    path: broken\n    remote: broken-remote\n"
              + "  shared:\n    path: shared\n    remote: shared-remote\n    mode: sync\n    conflict: ask\n"
              + "  gone:\n    path: gone\n    remote: gone-remote\n"
              + "transfers:\n  max: 1\nretry:\n  attempts: 1\nwatch:\n  quiet_period: 200ms\n")
    daemon = Daemon(workdir, config, tcp=True)
    daemon.ferry("sync", "shared", check=0)
    write(f"{workdir}/shared/a.txt", b"kept from this side\n")
    write(f"{workdir}/remote-shared/a.txt", b"the other side\n")
    os.utime(f"{workdir}/remote-shared/a.txt", (os.path.getmtime(f"{workdir}/remote-shared/a.txt") + 5,) * 2)
    daemon.ferry("sync", "shared", check=1)
    os.makedirs(SHOTS, exist_ok=True)
    daemon.start()
    driver = None
    try:
        driver = browser(1280)
        wait = WebDriverWait(driver, GUARD, poll_frequency=0.05)
        wait_for(lambda: os.path.exists(f"{workdir}/gates/held-clip-02.mp4"), "the first gate")
        driver.get(f"http://127.0.0.1:{daemon.port}/")
        # Behind the key: the page asks for it.
        key = wait.until(lambda d: d.find_element(By.ID, "key") if d.find_element(By.ID, "login").is_displayed() else None)
        key.send_keys(daemon.key, Keys.ENTER)
        wait.until(lambda d: not d.find_element(By.ID, "login").is_displayed())
        wait.until(lambda d: text_of(d, "#live") == "live")

        # The run stands at the first gate: two clips through, the third held.
        bar = '#folder-media [data-queue="media"]'
        until_text(wait, daemon, bar + " .numbers", lambda text: text.startswith("2/6 files"), "two clips through")
        first = int(driver.find_element(By.CSS_SELECTOR, bar + " .bar").get_attribute("aria-valuenow"))
        assert "now clip-02.mp4" in text_of(driver, bar + " .numbers")
        assert text_of(driver, "#folder-media .state").startswith("Running")
        # The failed file and the conflict are listed with their buttons.
        wait.until(lambda d: "blocked/IMG_1.jpg" in text_of(d, "#folder-broken .failed"))
        wait.until(lambda d: "a.txt" in text_of(d, "#folder-shared .conflicts"))
        driver.save_screenshot(os.path.join(SHOTS, "status-1280.png"))

        # Through the first gate: the progress moves on, live, to the second.
        write(f"{workdir}/gates/release-clip-02.mp4", b"go\n")
        until_text(wait, daemon, bar + " .numbers", lambda text: text.startswith("5/6 files"), "five clips through")
        second = int(driver.find_element(By.CSS_SELECTOR, bar + " .bar").get_attribute("aria-valuenow"))
        assert first < second < 100
        driver.set_window_size(360, 900)
        wait.until(lambda d: d.execute_script("return document.documentElement.clientWidth") <= 360)
        assert driver.execute_script("return document.documentElement.scrollWidth <= document.documentElement.clientWidth"), \
            "the page scrolls sideways at 360 px"
        driver.save_screenshot(os.path.join(SHOTS, "status-360.png"))
        driver.set_window_size(1280, 900)
        write(f"{workdir}/gates/release-clip-05.mp4", b"go\n")
        wait.until(lambda d: text_of(d, "#folder-media .state").startswith("Idle"))

        # Retry from the page, by keyboard: the obstacle is gone, the file goes.
        os.remove(f"{workdir}/remote-broken/blocked")
        press(driver, '#folder-broken .failed button[aria-label="Retry blocked/IMG_1.jpg"]', keyboard=True)
        wait.until(lambda d: not d.find_element(By.CSS_SELECTOR, "#folder-broken .failed").is_displayed())
        wait_for(lambda: os.path.exists(f"{workdir}/remote-broken/blocked/IMG_1.jpg"), "the retried file on the remote")

        # Answer the conflict from the page: this side's version wins on both.
        press(driver, '#folder-shared .conflicts button[aria-label="Keep local for a.txt"]')
        wait.until(lambda d: not d.find_element(By.CSS_SELECTOR, "#folder-shared .conflicts").is_displayed())
        wait_for(lambda: read_or_none(f"{workdir}/remote-shared/a.txt") == b"kept from this side\n", "the answer carried out")

        # A remote that does not answer: its folder says so, and why.
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#folder-gone .banner").is_displayed())
        assert text_of(driver, "#folder-gone .banner").startswith("Remote offline since ")

        # The pause button is reached with Tab from the top of the page.
        driver.find_element(By.TAG_NAME, "body").click()
        reached = False
        for _ in range(80):
            driver.switch_to.active_element.send_keys(Keys.TAB)
            if driver.switch_to.active_element.get_attribute("data-focus") == "pause-shared":
                reached = True
                break
        assert reached, "Tab never reached the shared folder's pause button"
        # Pause and resume by keyboard: the banner says so, and why.
        press(driver, '#folder-shared button[data-focus="pause-shared"]', keyboard=True)
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#folder-shared .banner").is_displayed())
        banner = text_of(driver, "#folder-shared .banner")
        assert banner.startswith("Paused since ") and "control API" in banner, banner
        press(driver, '#folder-shared button[data-focus="pause-shared"]', keyboard=True)
        wait.until(lambda d: not d.find_element(By.CSS_SELECTOR, "#folder-shared .banner").is_displayed())

        # The chart of the last day has this run's bars.
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chart svg rect")) > 0)
        driver.save_screenshot(os.path.join(SHOTS, "status-1280-done.png"))
        severe = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and "401" not in entry["message"]]
        assert not severe, severe
    finally:
        if driver:
            driver.quit()
        write(f"{workdir}/gates/release", b"go\n")
        daemon.stop()
