#!/usr/bin/env python3
"""Scale benchmark: time and peak memory of ferry on folders of very many small files.

For each size N (default 10,000, 100,000 and 1,000,000, so that one table shows how
time and memory grow; 1 to 64 bytes each, 1,000 per folder)
builds a tree once, then measures against a local-directory remote:
  first push --dry-run  the plan of N new files, shown and not written
  first push       every file is new (journal of N rows written, N jobs run)
  no-op push       nothing changed (the remote side known from the journal: no listing)
  no-op push --full  the same with a full listing of the remote
  1% changed       N/100 files rewritten
  pull             the remote into an empty folder with a fresh state
  sync, no-op      a two-way sync of the pulled folder, run twice (the second is timed)
and rsync -a on the same trees for the copies and the no-op, as the reference.
Peak memory is the child's own maximum resident set (wait4's ru_maxrss); the load
average is read before and after each size.

Usage: scripts/bench-scale.py [--files N[,N...]] [--work DIR] [--keep]
Writes bench-results/scale.md. Run by `make bench-scale` after a release build.
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

FERRY = os.environ.get("FERRY_BIN", ".build/release/ferry")


def run_measured(command):
    """Runs a command; returns (seconds, peak RSS in MiB). Fails loudly on a non-zero exit.

    Output goes to temporary files, not pipes: a child that writes more than a pipe holds
    would otherwise block before wait4 returns. On failure the message ends with the last
    lines of both, since ferry's --json summary (with the per-file errors) is on stdout.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            tails = []
            for stream in (err, out):
                stream.seek(max(0, stream.seek(0, os.SEEK_END) - 600))
                tail = stream.read().decode(errors="replace").strip()
                if tail:
                    tails.append(tail.splitlines()[-1][-400:])
            sys.exit(f"bench-scale: {' '.join(command)} exited {process.returncode}: {' / '.join(tails)}")
    return elapsed, usage.ru_maxrss / 1024


def make_tree(root, count):
    started = time.perf_counter()
    for index in range(count):
        folder = os.path.join(root, f"d{index // 1000:04d}")
        if index % 1000 == 0:
            os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"IMG_{index:07d}.jpg"), "wb") as f:
            f.write(b"x" * (1 + index % 64))
    print(f"bench-scale: made {count:,} files in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def touch_share(root, count, share):
    step = max(1, int(1 / share))
    changed = 0
    for index in range(0, count, step):
        path = os.path.join(root, f"d{index // 1000:04d}", f"IMG_{index:07d}.jpg")
        with open(path, "ab") as f:
            f.write(b"y")
        changed += 1
    return changed


def measure_size(count, work):
    """The rows of one tree size: (case, tool, seconds, peak MiB, journal MiB). Its data is
    left in `work`; main removes every size's data at the end."""
    os.makedirs(work, exist_ok=True)
    src, dst, state, mirror = (os.path.join(work, name) for name in ("src", "dst", "state", "rsync-dst"))
    pulled, pull_state, rsync_pulled = (os.path.join(work, name) for name in ("pulled", "pull-state", "rsync-pulled"))
    rows = []

    def journal_mib(folder):
        path = os.path.join(folder, "journal.sqlite")
        return os.path.getsize(path) / (1 << 20) if os.path.exists(path) else 0

    def measure(label, command, tool, journal_of=None):
        subprocess.run(["sync"], check=True)
        seconds, rss = run_measured(command)
        rows.append((label, tool, seconds, rss, journal_mib(journal_of) if journal_of else None))
        print(f"bench-scale: {count:,} {label} {tool}: {seconds:.1f} s, {rss:.0f} MiB", file=sys.stderr)

    rsync = shutil.which("rsync") is not None
    if not os.path.isdir(src):
        make_tree(src, count)
    for folder in (dst, state, mirror, pulled, pull_state, rsync_pulled):
        shutil.rmtree(folder, ignore_errors=True)
    push = [FERRY, "push", src, "--to", dst, "--state", state, "--json"]
    # Writes nothing: its peak is what a plan of N new files holds (every job, before).
    measure("first push --dry-run", push + ["--dry-run"], "ferry")
    measure("first push", push, "ferry", state)
    if rsync:
        measure("first push", ["rsync", "-a", src + "/", mirror + "/"], "rsync -a")
    measure("no-op push", push, "ferry", state)
    if rsync:
        measure("no-op push", ["rsync", "-a", src + "/", mirror + "/"], "rsync -a")
    measure("no-op push --full", push + ["--full"], "ferry", state)
    changed = touch_share(src, count, 0.01)
    measure(f"{changed:,} changed", push, "ferry", state)
    if rsync:
        measure(f"{changed:,} changed", ["rsync", "-a", src + "/", mirror + "/"], "rsync -a")
    measure("pull into empty", [FERRY, "pull", pulled, "--from", dst, "--state", pull_state, "--json"], "ferry", pull_state)
    if rsync:
        measure("pull into empty", ["rsync", "-a", dst + "/", rsync_pulled + "/"], "rsync -a")
    sync = [FERRY, "sync", pulled, "--to", dst, "--state", pull_state, "--json"]
    run_measured(sync)
    measure("sync, no-op", sync, "ferry", pull_state)
    if rsync:
        measure("sync, no-op", ["rsync", "-a", dst + "/", rsync_pulled + "/"], "rsync -a")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default=os.environ.get("SCALE_FILES", "10000,100000,1000000"),
                        help="tree sizes, comma-separated")
    parser.add_argument("--work", help="folder for the data (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the data afterwards")
    args = parser.parse_args()
    if not os.path.exists(FERRY):
        sys.exit(f"bench-scale: {FERRY} not found; run `swift build -c release` first")

    sizes = [int(text.replace("_", "")) for text in args.files.split(",") if text.strip()]
    base = args.work or tempfile.mkdtemp(prefix="ferry-scale-")
    lines = ["| files | case | tool | seconds | peak RSS (MiB) | journal (MiB) | tool ÷ ferry (time) | load before → after |",
             "|---:|---|---|---:|---:|---:|---:|---|"]
    try:
        for count in sizes:
            load_before = os.getloadavg()[0]
            # Every size's data stays until the end: on ext4 without a journal (this VM's disk)
            # a file created within a minute or five of mass deletes waits while the inode
            # allocator skips the freed inodes, and the next size's first push, the first
            # writer after the cleanup, stalled for it.
            rows = measure_size(count, os.path.join(base, f"n{count}"))
            load = f"{load_before:.1f} → {os.getloadavg()[0]:.1f}"
            ferry_times = {label: seconds for label, tool, seconds, _, _ in rows if tool == "ferry"}
            for label, tool, seconds, rss, journal in rows:
                ratio = "" if tool == "ferry" else f"{seconds / ferry_times[label]:.2f}"
                journal_text = "" if journal is None else f"{journal:.0f}"
                lines.append(f"| {count:,} | {label} | {tool} | {seconds:.2f} | {rss:.0f} | {journal_text} | {ratio} | {load} |")
    finally:
        if not args.work and not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    table = "\n".join(lines)
    os.makedirs("bench-results", exist_ok=True)
    with open(os.path.join("bench-results", "scale.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
