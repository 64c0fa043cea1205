#!/usr/bin/env python3
"""Several-devices benchmark: what a two-way sync costs when another device shares the
remote folder, and how soon a change on one device reaches the other.

Two devices (state folders) A and B sync one nginx WebDAV folder of BENCH_DEVICE_FILES
small files (default 20,000) in folders of 100. Measured, each a median of BENCH_RUNS:
- B's sync when nothing changed (change markers: the journal is the remote side), against
  `ferry sync --full` (a full listing) and `rclone lsf -R` (listing alone, no decision);
- B's sync after A changed one file;
- propagation: B runs `ferry watch` with watch.poll_interval 10s; A writes a new file and
  syncs; the time from A's sync starting to the file being complete on B.
Requests are counted in nginx's access log (read after each run has exited; a benchmark
may wait for the log, a test may not). Writes bench-results/devices.md. Not in make test.
"""
import os, shutil, signal, statistics, subprocess, sys, tempfile, time

FERRY = os.path.abspath(os.environ.get("FERRY_BIN", ".build/release/ferry"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
FILES = int(os.environ.get("BENCH_DEVICE_FILES", "20000"))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-servers")


def run(command, cwd):
    subprocess.run(command, check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_for(condition, timeout=120):
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > timeout:
            raise SystemExit("bench: timed out")
        time.sleep(0.02)


def main():
    if shutil.which("rclone") is None:
        sys.exit("bench: rclone is not installed (run: bash scripts/bootstrap.sh bench)")
    work = tempfile.mkdtemp(prefix="ferry-devbench-")
    os.chmod(work, 0o755)
    server = os.path.join(work, "nginx")
    origin = subprocess.run(["bash", os.path.join(SCRIPTS, "start-nginx.sh"), server],
                            check=True, capture_output=True, text=True).stdout.strip()
    log = os.path.join(server, "access.log")

    def log_lines():
        with open(log) as f:
            return sum(1 for _ in f)

    def counted(command):
        """Seconds and requests of one run (the log is read once nginx has written it)."""
        before = log_lines()
        start = time.perf_counter()
        run(command, work)
        seconds = time.perf_counter() - start
        time.sleep(0.3)
        return seconds, log_lines() - before

    try:
        a, b = os.path.join(work, "a"), os.path.join(work, "b")
        for index in range(FILES):
            folder = os.path.join(a, f"d{index // 100:03d}")
            if index % 100 == 0:
                os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"IMG_{index:05d}.jpg"), "wb") as f:
                f.write(b"x" * (1 + index % 64))
        os.makedirs(b)
        config = os.path.join(work, "config.yml")
        with open(config, "w") as f:
            f.write(f"watch:\n  poll_interval: 10s\n  quiet_period: 500ms\nremotes:\n  nas:\n    type: webdav\n"
                    f"    url: {origin}/dav/devices\nfolders:\n")
            for name, path in (("a", a), ("b", b)):
                f.write(f"  {name}:\n    path: {path}\n    remote: nas\n    mode: sync\n")
        sync_a = [FERRY, "sync", "a", "--config", config, "--state", os.path.join(work, "state-a")]
        sync_b = [FERRY, "sync", "b", "--config", config, "--state", os.path.join(work, "state-b")]
        run(sync_a, work)
        run(sync_b, work)
        run(sync_a, work)  # A reads B's introduction once

        samples = {"unchanged": [], "full": [], "rclone": [], "one change": []}
        requests = {}
        for round in range(RUNS):
            for name, command in (("unchanged", sync_b), ("full", sync_b + ["--full"]),
                                  ("rclone", ["rclone", "lsf", "-R", "--webdav-url", f"{origin}/dav/", ":webdav:devices"])):
                seconds, made = counted(command)
                samples[name].append(seconds)
                requests[name] = made
            with open(os.path.join(a, "d007", f"IMG_00700.jpg"), "wb") as f:
                f.write(b"edited on A, round %d" % round)
            run(sync_a, work)
            seconds, made = counted(sync_b)
            samples["one change"].append(seconds)
            requests["one change"] = made

        # Propagation: B watches (polling every 10 s); A writes and syncs.
        watch = subprocess.Popen([FERRY, "watch", "b", "--config", config, "--state", os.path.join(work, "state-b")],
                                 cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: os.path.exists(os.path.join(work, "state-b", "daemon-status.json")))
        propagation = []
        try:
            for round in range(RUNS):
                name = f"new-{round}.jpg"
                with open(os.path.join(a, "d011", name), "wb") as f:
                    f.write(b"new on A")
                start = time.perf_counter()
                run(sync_a, work)
                target = os.path.join(b, "d011", name)
                wait_for(lambda: os.path.exists(target) and os.path.getsize(target) == 8, timeout=60)
                propagation.append(time.perf_counter() - start)
                # The next round starts at a random point of B's poll cycle.
                time.sleep(1 + round * 1.7)
        finally:
            watch.send_signal(signal.SIGTERM)
            watch.wait(timeout=60)

        median = {name: statistics.median(values) for name, values in samples.items()}
        lines = [f"# Several devices on one nginx folder ({FILES:,} files in {FILES // 100} folders)", "",
                 "| case | seconds | requests | ÷ unchanged sync |", "|---|---:|---:|---:|"]
        labels = {"unchanged": "B's sync, nothing changed", "full": "B's sync --full (full listing)",
                  "rclone": "rclone lsf -R (listing only)", "one change": "B's sync after A changed one file"}
        for name in ("unchanged", "one change", "full", "rclone"):
            lines.append(f"| {labels[name]} | {median[name]:.3f} | {requests[name]} | {median[name] / median['unchanged']:.1f} |")
        lines += ["", f"Propagation with watch.poll_interval 10s, from A's sync starting to the file complete on B: "
                  f"median {statistics.median(propagation):.1f} s, max {max(propagation):.1f} s "
                  f"({', '.join(f'{p:.1f}' for p in propagation)})."]
        table = "\n".join(lines)
        os.makedirs("bench-results", exist_ok=True)
        with open(os.path.join("bench-results", "devices.md"), "w") as f:
            f.write(table + "\n")
        print(table)
    finally:
        subprocess.run(["bash", os.path.join(SCRIPTS, "stop.sh"), server])


if __name__ == "__main__":
    main()
