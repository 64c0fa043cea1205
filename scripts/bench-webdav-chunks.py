#!/usr/bin/env python3
"""What chunked uploads cost: one 1 GiB file pushed by ferry to Apache WebDAV (which
honours ranged PUT) with upload_chunk_size 0 (one PUT), and 16, 64 and 256 MiB chunks;
curl -T (one PUT) as the limit. Medians of BENCH_RUNS rounds (default 3) that run every
case once each, interleaved so load from elsewhere hits all cases alike; a fresh remote
folder and journal per run. Writes bench-results/webdav-chunks.md and prints it.

Usage: python3 scripts/bench-webdav-chunks.py   (FERRY_BIN overrides .build/release/ferry)
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

FERRY = os.path.abspath(os.environ.get("FERRY_BIN", ".build/release/ferry"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-servers")
CHUNKS = [("0 (one PUT)", "0"), ("8 MiB", "8M"), ("32 MiB", "32M"), ("64 MiB", "64M"), ("128 MiB", "128M"), ("256 MiB", "256M")]


def interleaved(commands):
    """Times every command once per round, round after round, so that load from other
    processes falls on all of them alike; returns the median per command."""
    samples = {label: [] for label, _ in commands}
    for run in range(RUNS):
        for label, command in commands:
            start = time.perf_counter()
            subprocess.run(command(run), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            samples[label].append(time.perf_counter() - start)
    return [(label, statistics.median(samples[label])) for label, _ in commands]


def main():
    if not os.access(FERRY, os.X_OK):
        sys.exit(f"bench: {FERRY} is not built (swift build -c release, or set FERRY_BIN)")
    work = tempfile.mkdtemp(prefix="ferry-chunkbench-")
    os.chmod(work, 0o755)
    server = os.path.join(work, "apache")
    origin = subprocess.run(["bash", os.path.join(SCRIPTS, "start-apache.sh"), server],
                            check=True, capture_output=True, text=True).stdout.strip()
    try:
        big = os.path.join(work, "big")
        os.makedirs(big)
        block = os.urandom(1 << 20)
        with open(os.path.join(big, "VID_0001.mp4"), "wb") as f:
            for _ in range(1024):
                f.write(block)
        commands = []
        for label, size in CHUNKS:
            def push(run, size=size):
                folder = f"c{size}-{run}"
                config = os.path.join(work, f"config-{folder}.yml")
                with open(config, "w") as f:
                    f.write(f"remotes:\n  apache:\n    type: webdav\n    url: {origin}/dav/{folder}\n"
                            f"    upload_chunk_size: \"{size}\"\n"
                            f"folders:\n  big:\n    path: {big}\n    remote: apache\n")
                state = os.path.join(work, "state-" + folder)
                return [FERRY, "push", "big", "--config", config, "--state", state]
            commands.append((f"ferry, upload_chunk_size {label}", push))
        commands.append(("curl -T (one PUT, the limit)",
                         lambda run: ["curl", "-s", "-f", "-T", os.path.join(big, "VID_0001.mp4"),
                                      f"{origin}/dav/curl-{run}.mp4"]))
        rows = interleaved(commands)
        puts = sum(1 for line in open(os.path.join(server, "access.log")) if line.startswith("PUT "))
    finally:
        subprocess.run(["bash", os.path.join(SCRIPTS, "stop.sh"), server])
        shutil.rmtree(work, ignore_errors=True)

    lines = ["1 GiB push to Apache 2.4 mod_dav_fs on 127.0.0.1, medians of %d runs" % RUNS, "",
             "| sender | seconds | MB/s |", "|---|---:|---:|"]
    for label, seconds in rows:
        lines.append(f"| {label} | {seconds:.3f} | {1024 * 1.048576 / seconds:.0f} |")
    lines += ["", f"({puts} PUT requests in all, probes included)"]
    table = "\n".join(lines)
    os.makedirs("bench-results", exist_ok=True)
    with open(os.path.join("bench-results", "webdav-chunks.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
