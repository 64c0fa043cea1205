"""The daemon row of `make bench-scale`: `ferry watch` on a folder of N small files
(bench_tree) to a local-directory remote, with the default quiet period (3 s).

1. The tree is made, then left until its newest file is older than the quiet period (a
   run leaves out files younger than that, as still being written).
2. First start, empty remote: seconds until the start-up run has sent all N files (the
   remote is then checked against the tree); stopped with SIGTERM; its peak RSS.
3. Restart on the tree now in sync: seconds until the start-up run ended (ready).
4. Idle: the process's CPU seconds (user + system, /proc/PID/stat) over IDLE_SECONDS with
   nothing written.
5. A new 4 KiB file written SAMPLES times, one after the other in different folders: the
   seconds from the write until the file is on the remote (median, min–max); the next
   is written once the run that sent the last one has ended.
6. SIGTERM; the restarted process's peak RSS (VmHWM before the signal); the remote checked again.
"""
import os, shutil, statistics, sys, time

import bench_process
import bench_tree
import watch_process

QUIET_PERIOD_SECONDS = 3
IDLE_SECONDS = int(os.environ.get("SCALE_IDLE_SECONDS", "60"))
SAMPLES = int(os.environ.get("SCALE_WATCH_SAMPLES", "5"))


def measure(count, work, ferry):
    """The daemon row at `count` files, as a dict; the data is left in `work`."""
    shutil.rmtree(work, ignore_errors=True)
    src, dst, state = (os.path.join(work, name) for name in ("src", "dst", "state"))
    manifest = bench_tree.make_tree(src, count)
    made = time.time()
    config = os.path.join(work, "config.yml")
    watch_process.write_config(config, f"{QUIET_PERIOD_SECONDS}s")
    time.sleep(max(0.0, made + QUIET_PERIOD_SECONDS + 1 - time.time()))
    load_before = bench_process.load()

    def start():
        return watch_process.WatchProcess(ferry, src, dst, state, config)

    # 2. First start: the whole tree sent.
    first = start()
    runs = 0
    while first.uploaded() < count:
        runs += 1
        # Read every 50 ms, not 2: the output has a line per file sent, and the reading
        # would take CPU from ferry.
        first_sent = first.wait_for_runs(runs, poll=0.05)
    first_rss = first.stop()
    bench_tree.check("the daemon's first start", manifest, src, dst)
    print(f"bench-scale: {count:,} daemon first start: {count:,} files sent in {first_sent:.1f} s "
          f"({runs} run{'s' if runs > 1 else ''}), {first_rss:.0f} MiB", file=sys.stderr)

    # 3. Restart, in sync.
    watcher = start()
    ready = watcher.wait_for_runs(1)
    if watcher.uploaded():
        watcher.background.fail(f"the restart sent {watcher.uploaded()} files of a tree in sync")
    print(f"bench-scale: {count:,} daemon ready after restart in {ready:.2f} s", file=sys.stderr)

    # 4. Idle.
    cpu_before = watcher.cpu_seconds()
    time.sleep(IDLE_SECONDS)
    watcher.background.check_running()
    idle_cpu = watcher.cpu_seconds() - cpu_before
    idle_runs = len(watcher.summaries) - 1
    print(f"bench-scale: {count:,} daemon idle: {idle_cpu:.2f} s of CPU in {IDLE_SECONDS} s", file=sys.stderr)

    # 5. New files, one at a time.
    delays = []
    folders = max(1, count // bench_tree.PER_FOLDER)
    for sample in range(SAMPLES):
        relative = os.path.join(bench_tree.folder_name((sample % folders) * bench_tree.PER_FOLDER),
                                f"NEW_{sample:04d}.jpg")
        payload = os.urandom(4096)
        delays.append(watcher.time_to_remote(os.path.join(src, relative), os.path.join(dst, relative), payload))
        manifest.add(relative, len(payload))
        while watcher.uploaded() < sample + 1:
            watcher.wait_for_runs(len(watcher.summaries) + 1)
        print(f"bench-scale: {count:,} daemon: new file on the remote after {delays[-1]:.2f} s", file=sys.stderr)
    rss = watcher.stop()
    bench_tree.check("the daemon's new files", manifest, src, dst)
    return {"first start": first_sent, "first start runs": runs, "first start RSS": first_rss,
            "ready": ready, "idle CPU": idle_cpu, "idle runs": idle_runs, "delays": delays, "RSS": rss,
            "load before": load_before, "load after": bench_process.load()}


def table(rows):
    """The Markdown lines of the daemon rows: (count, measure's dict) each."""
    lines = [f"| files | first start: all sent (s) | ready after a restart (s) | idle CPU over {IDLE_SECONDS} s (s) "
             f"| write → on the remote, median of {SAMPLES} (min–max) (s) | peak RSS first start / restart (MiB) "
             "| load before → after |",
             "|---:|---:|---:|---:|---:|---:|---|"]
    for count, row in rows:
        delays = row["delays"]
        idle = f"{row['idle CPU']:.2f}" + (f" ({row['idle runs']} runs)" if row["idle runs"] else "")
        lines.append(f"| {count:,} | {row['first start']:.2f} | {row['ready']:.2f} | {idle} "
                     f"| {statistics.median(delays):.2f} ({min(delays):.2f}–{max(delays):.2f}) "
                     f"| {row['first start RSS']:.0f} / {row['RSS']:.0f} "
                     f"| {row['load before']:.1f} → {row['load after']:.1f} |")
    return lines
