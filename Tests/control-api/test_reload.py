"""A reload (SIGHUP, what `systemctl --user reload ferry` sends) keeps the control API: the
event stream stays open and says `reload`, long polls still wait for events, and a push
handed to the daemon before the reload returns once its run is done under the new config.
Every wait is for an event (a gate file, an event on the stream, a process's exit)."""
import os
import signal
import subprocess
import threading

from conftest import GUARD, Daemon, EventStream, ferry_binary, held_store_remote, wait_for, write

KiB = 1024


def test_a_reload_keeps_the_stream_the_long_polls_and_a_delegated_push(workdir):
    write(f"{workdir}/held/a.jpg", os.urandom(KiB), age=60)
    config = ("remotes:\n" + held_store_remote("store", workdir, "clip.mp4")
              + "folders:\n  held:\n    path: held\n    remote: store\n"
              + "watch:\n  quiet_period: 200ms\n")
    daemon = Daemon(workdir, config).start()
    pusher = None
    try:
        wait_for(lambda: daemon.folder("held")["state"] == "idle"
                 and daemon.folder("held")["counts"].get("inSync", {}).get("files") == 1, "the first run")
        stream = EventStream(daemon)
        assert stream.next()[1] == "status"

        # A push handed to the daemon, held at its gate mid-run.
        write(f"{workdir}/held/clip.mp4", os.urandom(64 * KiB), age=60)
        pusher = subprocess.Popen([ferry_binary(), "push", "held", "--json", "--config", daemon.config_path,
                                   "--state", daemon.state], cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        held = f"{workdir}/gates/held-clip.mp4"
        wait_for(lambda: os.path.exists(held), "the held upload")
        os.remove(held)

        daemon.process.send_signal(signal.SIGHUP)
        # The same stream says so, and goes on.
        seen = []
        while True:
            _, name, data = stream.next()
            seen.append(name)
            if name == "reload":
                assert data["folders"] == ["held"]
                break
        assert pusher.poll() is None, pusher.communicate()

        # The new runtime runs the push again and holds at the same gate; let it through.
        wait_for(lambda: os.path.exists(held), "the upload held again under the new config")
        write(f"{workdir}/gates/release-clip.mp4", b"go\n")
        out, err = pusher.communicate(timeout=GUARD)
        assert pusher.returncode == 0, out + err
        assert '"event":"summary"' in out.replace(" ", "")
        assert daemon.folder("held")["counts"].get("inSync", {}).get("files") == 2

        # The stream still carries run events after the reload.
        while True:
            _, name, data = stream.next()
            if name == "run_ended" and data.get("folder") == "held" and not data.get("stopped"):
                break

        # A long poll waits for the next event, as before the reload.
        last = daemon.last_event_id()
        answer = {}

        def poll():
            answer["batch"] = daemon.events_after(last, wait=25)

        poller = threading.Thread(target=poll)
        poller.start()
        write(f"{workdir}/held/b.jpg", os.urandom(KiB))
        poller.join(GUARD)
        assert answer["batch"]["events"], answer
        stream.close()
    finally:
        if pusher and pusher.poll() is None:
            pusher.kill()
        write(f"{workdir}/gates/release", b"go\n")
        daemon.stop()
