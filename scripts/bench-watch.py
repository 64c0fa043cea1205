#!/usr/bin/env python3
"""Watch benchmark: how soon `ferry watch` sends what lands in a folder, and how fast it stops.

Cases (local-directory remote, watch.quiet_period 500ms, medians of BENCH_RUNS runs):
- latency: one 100 KiB file written into the watched folder until it is complete on the
  other side (the quiet period is part of it);
- burst: N small files (BENCH_BURST, default 2000) moved in as one folder until all arrived;
- stop: SIGTERM during a throttled 64 MiB upload until the process has exited.
Prints a Markdown table and writes bench-results/watch.md. Not part of `make test`.
"""
import os, statistics, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_process  # noqa: E402
import watch_process  # noqa: E402

FERRY = os.path.abspath(os.environ.get("FERRY_BIN", ".build/release/ferry"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
BURST = int(os.environ.get("BENCH_BURST", "2000"))


def start_watch(work, *extra, ready=True):
    """`ferry watch src --to dst` in `work`; with `ready`, once its start-up run has ended."""
    config = os.path.join(work, "config.yml")
    watch_process.write_config(config, "500ms")
    process = watch_process.WatchProcess(FERRY, "src", "dst", "state", config, extra, cwd=work)
    if ready:
        process.wait_for_runs(1)
    return process


def latency():
    work = tempfile.mkdtemp(prefix="ferry-bench-watch-")
    process = start_watch(work)
    elapsed = process.time_to_remote(os.path.join(work, "src", "IMG_0001.jpg"),
                                     os.path.join(work, "dst", "IMG_0001.jpg"), os.urandom(100 * 1024))
    process.stop()
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
    bench_process.wait_for(lambda: os.path.exists(last) and len([n for n in os.listdir(dst) if n.endswith(".jpg")]) == BURST,
                           what=f"{BURST} files in {dst}", on_timeout=process.background.fail)
    elapsed = time.perf_counter() - start
    process.stop()
    return elapsed


def stop_time():
    work = tempfile.mkdtemp(prefix="ferry-bench-watch-")
    os.makedirs(os.path.join(work, "src"))
    with open(os.path.join(work, "src", "VID_0001.mp4"), "wb") as f:
        for _ in range(64):
            f.write(os.urandom(1 << 20))
    os.utime(os.path.join(work, "src", "VID_0001.mp4"), (time.time() - 60, time.time() - 60))
    process = start_watch(work, "--bwlimit", "8M", ready=False)
    partial = os.path.join(work, "dst", ".VID_0001.mp4.ferry-part")
    bench_process.wait_for(lambda: os.path.exists(partial) and os.path.getsize(partial) > 4 << 20,
                           what=f"4 MiB in {partial}", on_timeout=process.background.fail)
    start = time.perf_counter()
    process.stop()
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
