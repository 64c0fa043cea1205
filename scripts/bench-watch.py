#!/usr/bin/env python3
"""Watch benchmark: how soon `ferry watch` sends what lands in a folder, and how fast it stops.

Cases (local-directory remote, watch.quiet_period 500ms, medians of BENCH_RUNS runs):
- latency: one 100 KiB file written into the watched folder until it is complete on the
  other side (the quiet period is part of it);
- burst: N small files (BENCH_BURST, default 2000) moved in as one folder until all arrived;
- stop: SIGTERM during a throttled 64 MiB upload until the process has exited.
Prints a Markdown table and writes bench-results/watch.md. Not part of `make test`.
"""
import os, signal, statistics, subprocess, sys, tempfile, time

FERRY = os.path.abspath(os.environ.get("FERRY_BIN", ".build/release/ferry"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
BURST = int(os.environ.get("BENCH_BURST", "2000"))


def wait_for(condition, timeout=300):
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > timeout:
            raise SystemExit("bench: timed out")
        time.sleep(0.005)


def start_watch(work, *extra):
    config = os.path.join(work, "config.yml")
    with open(config, "w") as f:
        f.write("watch:\n  quiet_period: 500ms\n")
    for name in ("src", "dst"):
        os.makedirs(os.path.join(work, name), exist_ok=True)
    process = subprocess.Popen([FERRY, "watch", "src", "--to", "dst", "--state", "state", "--config", config, *extra],
                               cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(os.path.join(work, "state", "daemon-status.json")))
    return process


def stop(process):
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)


def latency():
    work = tempfile.mkdtemp(prefix="ferry-bench-watch-")
    process = start_watch(work)
    payload = os.urandom(100 * 1024)
    target = os.path.join(work, "dst", "IMG_0001.jpg")
    start = time.perf_counter()
    with open(os.path.join(work, "src", "IMG_0001.jpg"), "wb") as f:
        f.write(payload)
    wait_for(lambda: os.path.exists(target) and os.path.getsize(target) == len(payload))
    elapsed = time.perf_counter() - start
    stop(process)
    return elapsed


def burst():
    work = tempfile.mkdtemp(prefix="ferry-bench-watch-")
    process = start_watch(work)
    staging = os.path.join(work, "staging", "drop")
    os.makedirs(staging)
    for i in range(BURST):
        with open(os.path.join(staging, f"IMG_{i:05d}.jpg"), "wb") as f:
            f.write(os.urandom(4096))
    last = os.path.join(work, "dst", "drop", f"IMG_{BURST - 1:05d}.jpg")
    dst = os.path.join(work, "dst", "drop")
    start = time.perf_counter()
    os.rename(staging, os.path.join(work, "src", "drop"))
    wait_for(lambda: os.path.exists(last) and len([n for n in os.listdir(dst) if n.endswith(".jpg")]) == BURST)
    elapsed = time.perf_counter() - start
    stop(process)
    return elapsed


def stop_time():
    work = tempfile.mkdtemp(prefix="ferry-bench-watch-")
    os.makedirs(os.path.join(work, "src"))
    with open(os.path.join(work, "src", "VID_0001.mp4"), "wb") as f:
        for _ in range(64):
            f.write(os.urandom(1 << 20))
    os.utime(os.path.join(work, "src", "VID_0001.mp4"), (time.time() - 60, time.time() - 60))
    process = start_watch(work, "--bwlimit", "8M")
    partial = os.path.join(work, "dst", ".VID_0001.mp4.ferry-part")
    wait_for(lambda: os.path.exists(partial) and os.path.getsize(partial) > 4 << 20)
    start = time.perf_counter()
    stop(process)
    return time.perf_counter() - start


def main():
    if not os.path.exists(FERRY):
        sys.exit(f"bench: {FERRY} not found; run `swift build -c release` first (or set FERRY_BIN)")
    cases = [("latency: 1 file written → complete on the remote (quiet period 0.5 s)", latency),
             (f"burst: {BURST} files moved in → all on the remote", burst),
             ("stop: SIGTERM during a 64 MiB upload → process exited", stop_time)]
    lines = ["Ferry watch on " + os.uname().nodename + f" ({FERRY}, medians of {RUNS})", "",
             "| case | seconds |", "|---|---:|"]
    for label, case in cases:
        lines.append(f"| {label} | {statistics.median(case() for _ in range(RUNS)):.3f} |")
    table = "\n".join(lines)
    os.makedirs("bench-results", exist_ok=True)
    with open(os.path.join("bench-results", "watch.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
