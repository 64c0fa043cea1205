"""The control API against a running `ferry daemon`: every endpoint, the key on TCP, the
socket's mode, pausing, retry, resolve, the event stream's resume (docs/api.md)."""
import json
import os
import socket
import stat
import time

import pytest

from conftest import GUARD, Daemon, EventStream, free_port, held_store_remote, read_or_none, wait_for, write

KiB = 1024


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("api"))
    # Made a minute ago, so that the first run plans all four (see `write`).
    for name in ("clip-01.mp4", "clip-02.mp4", "clip-03.mp4"):
        write(f"{directory}/held/{name}", os.urandom(64 * KiB), age=60)
    write(f"{directory}/held/.thumbnails/clip-02.jpg", os.urandom(2 * KiB), age=60)
    write(f"{directory}/plain/first.jpg", os.urandom(KiB))
    write(f"{directory}/other/first.jpg", os.urandom(KiB))
    write(f"{directory}/broken/blocked/IMG_1.jpg", os.urandom(KiB))
    write(f"{directory}/broken/IMG_2.jpg", os.urandom(KiB))
    write(f"{directory}/remote-broken/blocked", b"a file where a folder should be\n")
    for name in ("a.txt", "b.txt", "c.txt"):
        write(f"{directory}/shared/{name}", b"first\n")
    os.makedirs(f"{directory}/gone", exist_ok=True)
    for folder in ("remote-plain", "remote-other", "remote-shared"):
        os.makedirs(f"{directory}/{folder}", exist_ok=True)
    config = (
        "remotes:\n" + held_store_remote("store", directory, "clip-02.mp4")
        + "  plain-remote:\n    type: local\n    path: remote-plain\n"
        + "  other-remote:\n    type: local\n    path: remote-other\n"
        + "  broken-remote:\n    type: local\n    path: remote-broken\n"
        + "  shared-remote:\n    type: local\n    path: remote-shared\n"
        # A WebDAV server on a port where nothing listens: the folder is offline.
        + f"  gone-remote:\n    type: webdav\n    url: http://127.0.0.1:{free_port()}/dav/\n"
        + "folders:\n"
        + "  held:\n    path: held\n    remote: store\n"
        + "  plain:\n    path: plain\n    remote: plain-remote\n"
        + "  other:\n    path: other\n    remote: other-remote\n"
        + "  broken:\n    path: broken\n    remote: broken-remote\n"
        + "  shared:\n    path: shared\n    remote: shared-remote\n    mode: sync\n    conflict: ask\n"
        + "  gone:\n    path: gone\n    remote: gone-remote\n"
        + "retry:\n  attempts: 1\n"
        + "watch:\n  quiet_period: 200ms\n"
        + "schedule:\n  - every: 24h\n    run: push plain\n"
    )
    instance = Daemon(directory, config, tcp=True)
    # Conflicts for the API to answer: synced once, then changed on both sides.
    instance.ferry("sync", "shared", check=0)
    later = time.time() + 5
    for name in ("a.txt", "b.txt", "c.txt"):
        write(f"{directory}/shared/{name}", b"local edit\n")
        write(f"{directory}/remote-shared/{name}", b"remote edit\n")
        os.utime(f"{directory}/remote-shared/{name}", (later, later))
    instance.ferry("sync", "shared", check=1)
    instance.start()
    try:
        # The held push stops at its gate: its thumbnail and the other clips are through.
        wait_for(lambda: os.path.exists(f"{directory}/gates/held-clip-02.mp4"), "the held upload")
        # (Results reach the journal in groups, a moment after the files: wait for the journal.)
        wait_for(lambda: instance.folder("held")["counts"].get("inSync", {}).get("files") == 3, "the held run's other files")
        yield instance
    finally:
        write(f"{directory}/gates/release", b"go\n")
        instance.stop()


def test_the_socket_is_private(daemon):
    mode = os.stat(daemon.socket_path).st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600


def test_status_folders_and_schedules(daemon):
    status, body = daemon.get("/v1/status")
    assert status == 200
    assert body["daemon"]["pid"] == daemon.process.pid
    assert [f["name"] for f in body["folders"]] == ["held", "plain", "other", "broken", "shared", "gone"]
    held = daemon.folder("held")
    assert held["state"] == "running" and held["mode"] == "push"
    media = next(q for q in held["queues"] if q["queue"] == "media")
    assert media["files_total"] == 3 and media["files_left"] == 1 and media["current"] == ["clip-02.mp4"]
    assert media["bytes_left"] == 64 * KiB
    # At the gate nothing moves: a rate is a number (its window may have emptied), and
    # the time left is given only with a rate to go by.
    assert held["rate_bytes_per_second"] >= 0
    if held["rate_bytes_per_second"] > 0:
        assert held["eta_seconds"] is not None and held["eta_seconds"] >= 0
    else:
        assert held["eta_seconds"] is None
    status, listing = daemon.get("/v1/folders")
    assert status == 200 and len(listing["folders"]) == 6
    assert daemon.get("/v1/folders/nothing-like-it")[0] == 404
    status, schedules = daemon.get("/v1/schedules")
    assert status == 200 and schedules["schedules"][0]["action"].startswith("push plain")


def test_files_are_filtered_and_paged(daemon):
    status, page = daemon.get("/v1/files?folder=held&limit=2")
    assert status == 200 and len(page["files"]) == 2 and page["next"]
    status, rest = daemon.get(f"/v1/files?folder=held&limit=2&after={page['next']}")
    paths = [f["path"] for f in page["files"] + rest["files"]]
    assert paths == sorted(paths) and len(set(paths)) == 4 and rest["next"] is None
    status, thumbs = daemon.get("/v1/files?folder=held&prefix=.thumbnails/")
    assert [f["path"] for f in thumbs["files"]] == [".thumbnails/clip-02.jpg"]
    status, synced = daemon.get("/v1/files?folder=held&status=inSync")
    assert {f["path"] for f in synced["files"]} == {".thumbnails/clip-02.jpg", "clip-01.mp4", "clip-03.mp4"}
    # The held clip's thumbnail is there, the clip not yet: its media item is filesPending.
    status, pending = daemon.get("/v1/files?folder=held&status=filesPending")
    assert status == 200
    assert {(f["path"], f["item"]) for f in pending["files"]} == {(".thumbnails/clip-02.jpg", "clip-02"), ("clip-02.mp4", "clip-02")}
    status, items = daemon.get("/v1/items?folder=held&status=filesPending")
    assert [i["key"] for i in items["items"]] == ["clip-02"]
    assert daemon.get("/v1/files?folder=held&status=nonsense")[0] == 400
    assert daemon.get("/v1/files")[0] == 400
    assert daemon.get("/v1/files?folder=held&limit=0")[0] == 400


def test_tcp_asks_for_the_key_and_checks_host_and_origin(daemon):
    host = {"Host": f"127.0.0.1:{daemon.port}"}
    assert daemon.get("/v1/status", tcp=True, headers=host)[0] == 401
    assert daemon.get("/v1/status", tcp=True, headers={**host, "X-API-Key": "wrong" * 8})[0] == 401
    assert daemon.get("/metrics", tcp=True, headers=host)[0] == 401
    assert daemon.get("/v1/status", tcp=True, headers={**host, "X-API-Key": daemon.key})[0] == 200
    assert daemon.get("/v1/status", tcp=True, headers={**host, "Authorization": "Bearer " + daemon.key})[0] == 200
    # DNS rebinding: a name that is not this daemon's, even with the key.
    assert daemon.get("/v1/status", tcp=True, headers={"Host": f"attacker.example:{daemon.port}", "X-API-Key": daemon.key})[0] == 403
    # A page on another site.
    cross = {**host, "X-API-Key": daemon.key, "Origin": "http://attacker.example"}
    assert daemon.get("/v1/status", tcp=True, headers=cross)[0] == 403
    same = {**host, "X-API-Key": daemon.key, "Origin": f"http://127.0.0.1:{daemon.port}"}
    assert daemon.get("/v1/status", tcp=True, headers=same)[0] == 200
    # The page itself holds no data and asks for the key.
    status, page = daemon.get("/", tcp=True, headers=host)
    assert status == 200 and "API key" in page
    # The Unix socket needs no key: its mode says who may connect.
    assert daemon.get("/v1/status")[0] == 200


def test_a_paused_folder_moves_no_file(daemon):
    start = daemon.last_event_id()
    status, folder = daemon.post("/v1/folders/plain/pause")
    assert status == 200 and folder["paused"] and folder["state"] == "paused"
    # And why, since when.
    assert folder["paused_reason"] == "paused through the control API" and folder["paused_since"]
    write(f"{daemon.dir}/plain/while-paused.jpg", os.urandom(KiB))
    write(f"{daemon.dir}/other/while-paused.jpg", os.urandom(KiB))
    assert daemon.post("/v1/folders/plain/run")[0] == 202
    assert daemon.post("/v1/folders/other/run")[0] == 202
    # The folder beside it, asked at the same moment, runs and sends its file ...
    _, seen = daemon.wait_for_event(start, lambda e: e["name"] == "transferred" and e["data"]["folder"] == "other"
                                    and e["data"]["path"] == "while-paused.jpg", "the other folder's file")
    # ... while the paused one starts no run and its file stays where it is.
    assert not any(e["name"] in ("run_started", "transferred") and e["data"].get("folder") == "plain" for e in seen)
    assert not os.path.exists(f"{daemon.dir}/remote-plain/while-paused.jpg")
    assert daemon.folder("plain")["paused"]
    mark = daemon.last_event_id()
    status, resumed = daemon.post("/v1/folders/plain/resume")
    assert status == 200 and resumed["paused_reason"] is None and resumed["paused_since"] is None
    daemon.wait_for_event(mark, lambda e: e["name"] == "transferred" and e["data"]["folder"] == "plain"
                          and e["data"]["path"] == "while-paused.jpg", "the file once resumed")
    assert os.path.exists(f"{daemon.dir}/remote-plain/while-paused.jpg")
    # Everything at once.
    status, everything = daemon.post("/v1/pause")
    assert status == 200 and everything["daemon"]["paused"] and all(f["paused"] for f in everything["folders"])
    assert all("with every folder" in f["paused_reason"] for f in everything["folders"])
    status, everything = daemon.post("/v1/resume")
    assert status == 200 and not any(f["paused"] for f in everything["folders"])


def test_the_event_stream_resumes_with_last_event_id(daemon):
    stream = EventStream(daemon)
    first = stream.next()
    assert first[1] == "status" and first[0] is None
    seen_up_to = daemon.last_event_id()
    stream.close()
    # Events happen while no one listens.
    write(f"{daemon.dir}/plain/while-away.jpg", os.urandom(KiB))
    assert daemon.post("/v1/folders/plain/run")[0] == 202
    daemon.wait_for_event(seen_up_to, lambda e: e["name"] == "run_ended" and e["data"]["folder"] == "plain"
                          and os.path.exists(f"{daemon.dir}/remote-plain/while-away.jpg"), "the run while away")
    # Back with Last-Event-ID: what was missed comes first, in order, without a gap.
    stream = EventStream(daemon, last_event_id=seen_up_to)
    ids, names = [], []
    while "while-away.jpg" not in [n for n in names]:
        event_id, name, data = stream.next()
        if event_id is None:
            continue
        ids.append(event_id)
        names.append(data.get("path") if name == "transferred" else name)
    stream.close()
    assert ids[0] == seen_up_to + 1 and ids == list(range(ids[0], ids[0] + len(ids)))
    # Too far behind (or ahead): a reset first, then the stream.
    stream = EventStream(daemon, last_event_id=10_000_000)
    names = [stream.next()[1], stream.next()[1]]
    stream.close()
    assert "reset" in names


def test_retry_a_failed_file(daemon):
    status, failed = daemon.get("/v1/files?folder=broken&status=syncError")
    assert [f["path"] for f in failed["files"]] == ["blocked/IMG_1.jpg"] and "in the way" in failed["files"][0]["error"]
    assert daemon.folder("broken")["failed_files"] == 1
    os.remove(f"{daemon.dir}/remote-broken/blocked")
    mark = daemon.last_event_id()
    status, answer = daemon.post("/v1/folders/broken/retry", {"paths": ["blocked/IMG_1.jpg"]})
    assert status == 200 and answer["retried"] == ["blocked/IMG_1.jpg"]
    daemon.wait_for_event(mark, lambda e: e["name"] == "transferred" and e["data"]["path"] == "blocked/IMG_1.jpg", "the retried file")
    assert os.path.exists(f"{daemon.dir}/remote-broken/blocked/IMG_1.jpg")
    assert daemon.post("/v1/folders/broken/retry", {"paths": "not a list"})[0] == 400


def test_an_unreachable_remote_shows_as_offline_and_why(daemon):
    gone = wait_for(lambda: (lambda f: f if f["offline"] else None)(daemon.folder("gone")), "the folder's remote offline")
    assert gone["state"] == "offline" and gone["offline_since"] and gone["offline_message"]
    status, body = daemon.get("/v1/status")
    assert any(r["remote"].startswith("webdav:http://127.0.0.1:") for r in body["offline_remotes"])
    # The others are not held up by it.
    assert daemon.folder("plain")["state"] in ("idle", "running")


def test_resolve_a_conflict(daemon):
    status, conflicts = daemon.get("/v1/files?folder=shared&status=conflict")
    assert [f["path"] for f in conflicts["files"]] == ["a.txt", "b.txt", "c.txt"]
    assert daemon.post("/v1/folders/shared/resolve", {"path": "a.txt", "keep": "sideways"})[0] == 400
    assert daemon.post("/v1/folders/shared/resolve", {"path": "no-such.txt", "keep": "local"})[0] == 404
    mark = daemon.last_event_id()
    status, answer = daemon.post("/v1/folders/shared/resolve", {"path": "a.txt", "keep": "local"})
    assert status == 200 and answer["resolved"] == ["a.txt"]
    daemon.wait_for_event(mark, lambda e: e["name"] == "run_ended" and e["data"]["folder"] == "shared"
                          and read_or_none(f"{daemon.dir}/remote-shared/a.txt") == b"local edit\n", "the answer carried out")
    # The remote's version, on both sides.
    mark = daemon.last_event_id()
    status, answer = daemon.post("/v1/folders/shared/resolve", {"path": "b.txt", "keep": "remote"})
    assert status == 200 and answer["resolved"] == ["b.txt"]
    daemon.wait_for_event(mark, lambda e: e["name"] == "run_ended" and e["data"]["folder"] == "shared"
                          and read_or_none(f"{daemon.dir}/shared/b.txt") == b"remote edit\n", "keep remote carried out")
    # Both: one keeps the name, the other a conflict name, on both sides; nothing is lost.
    mark = daemon.last_event_id()
    status, answer = daemon.post("/v1/folders/shared/resolve", {"path": "c.txt", "keep": "both"})
    assert status == 200 and answer["resolved"] == ["c.txt"]

    def both_versions(folder):
        contents = {read_or_none(os.path.join(folder, n)) for n in os.listdir(folder) if n.startswith("c.")}
        return contents == {b"local edit\n", b"remote edit\n"}
    daemon.wait_for_event(mark, lambda e: e["name"] == "run_ended" and e["data"]["folder"] == "shared"
                          and both_versions(f"{daemon.dir}/shared") and both_versions(f"{daemon.dir}/remote-shared"),
                          "keep both carried out")
    assert daemon.folder("shared")["conflict_files"] == 0


def test_actions_and_their_errors(daemon):
    status, answer = daemon.post("/v1/folders/plain/run", {"mode": "push"})
    assert status == 202 and answer == {"folder": "plain", "accepted": True, "mode": "push"}
    assert daemon.post("/v1/folders/plain/run", {"mode": "sideways"})[0] == 400
    assert daemon.post("/v1/folders/plain/rescan")[0] == 202
    assert daemon.post("/v1/folders/plain/explode")[0] == 404
    assert daemon.post("/v1/folders/nothing-like-it/run")[0] == 404
    assert daemon.get("/v1/folders/plain/run")[0] == 405
    assert daemon.request("DELETE", "/v1/status")[0] == 405
    assert daemon.get("/v2/anything")[0] == 404
    assert daemon.request("POST", "/v1/folders/plain/run", headers={"Content-Type": "application/json"})[0] == 202


def test_metrics_and_history(daemon):
    status, text = daemon.get("/metrics")
    assert status == 200
    for name in ('ferry_runs_total{folder="plain"', 'ferry_files_transferred_total{folder="plain"',
                 'ferry_files{folder="held",status="inSync"} 3', 'ferry_folder_paused{folder="plain"} 0',
                 'ferry_run_files_left{folder="held",queue="media"} 1', 'ferry_failures_total{folder="broken",class="permanent"} '):
        assert name in text, name
    failed = [line for line in text.splitlines() if line.startswith('ferry_failures_total{folder="broken",class="permanent"}')]
    assert int(failed[0].split()[-1]) >= 1
    status, history = daemon.get("/v1/history?folder=plain&limit=5")
    assert status == 200 and history["runs"] and all(r["folder"] == "plain" for r in history["runs"])
    assert any(r["moved"] and r["moved"][0]["direction"] == "upload" for r in history["runs"])
    status, hours = daemon.get("/v1/history/transfers?hours=24")
    assert status == 200 and len(hours["hours"]) == 24 and sum(h["files"] for h in hours["hours"]) >= 3
    assert daemon.get("/v1/history/transfers?hours=0")[0] == 400
    listed = daemon.ferry("status", "--history", "--json", check=0)
    runs = json.loads(listed.stdout)["runs"]
    assert {"manual", "watch"} <= {r["trigger"] for r in runs}  # the CLI's syncs and the daemon's runs
    doctor = daemon.ferry("doctor", check=0)
    assert "health (run history)" in doctor.stdout


def test_status_and_push_go_through_the_daemon(daemon):
    status = daemon.ferry("status", "--json", check=0)
    assert json.loads(status.stdout)["daemon"]["pid"] == daemon.process.pid
    write(f"{daemon.dir}/other/by-hand.jpg", os.urandom(KiB))
    pushed = daemon.ferry("push", "other", "--json")
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    assert any(json.loads(line).get("event") == "summary" for line in pushed.stdout.splitlines())
    assert os.path.exists(f"{daemon.dir}/remote-other/by-hand.jpg")


def test_the_held_run_finishes_once_released(daemon):
    write(f"{daemon.dir}/gates/release-clip-02.mp4", b"go\n")
    try:
        wait_for(lambda: daemon.folder("held")["state"] == "idle" and daemon.folder("held")["counts"].get("inSync", {}).get("files") == 4,
                 "the held run's end")
    except AssertionError as error:
        raise AssertionError(f"{error}: {json.dumps(daemon.folder('held'))}; gates: {sorted(os.listdir(daemon.dir + '/gates'))}")
    status, pending = daemon.get("/v1/files?folder=held&status=filesPending")
    assert pending["files"] == []


def test_a_folder_waiting_for_its_run_conditions(workdir, monkeypatch):
    """`when: {power: ac}` on battery (a fake sysfs tree): GET /v1/folders/NAME says why in
    `waiting_for`, the event stream says `waiting`, nothing moves; on mains power the file
    goes and `waiting_for` is null again (docs/cache-and-conditions.md)."""
    power = os.path.join(workdir, "power")

    def supply(online):
        write(f"{power}/AC/type", b"Mains\n")
        write(f"{power}/AC/online", b"1\n" if online else b"0\n")
        write(f"{power}/BAT0/type", b"Battery\n")
        write(f"{power}/BAT0/capacity", b"70\n")
        write(f"{power}/BAT0/status", b"Charging\n" if online else b"Discharging\n")

    supply(online=False)
    monkeypatch.setenv("FERRY_POWER_SUPPLY_ROOT", power)
    write(f"{workdir}/camera/IMG_1.jpg", os.urandom(KiB))
    os.makedirs(f"{workdir}/remote-camera", exist_ok=True)
    config = ("remotes:\n  nas:\n    type: local\n    path: remote-camera\n"
              "folders:\n  camera:\n    path: camera\n    remote: nas\n    when: { power: ac }\n"
              "watch:\n  quiet_period: 200ms\n  condition_interval: 1s\n")
    instance = Daemon(workdir, config).start()
    try:
        wait_for(lambda: instance.folder("camera")["waiting_for"] == "waiting for mains power (on battery)",
                 "the folder to wait for mains power")
        instance.wait_for_event(0, lambda event: event["name"] == "waiting", "the waiting event")
        assert not os.path.exists(f"{workdir}/remote-camera/IMG_1.jpg")
        supply(online=True)
        wait_for(lambda: os.path.exists(f"{workdir}/remote-camera/IMG_1.jpg"), "the file once on mains power")
        wait_for(lambda: instance.folder("camera")["waiting_for"] is None, "waiting_for to clear")
    finally:
        instance.stop()
