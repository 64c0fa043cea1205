#!/usr/bin/env python3
"""Scale benchmark: time and peak memory of ferry on a folder of very many small files.

Builds a tree of N files (default 1,000,000; 1 to 64 bytes each, 1,000 per folder) once,
then measures against a local-directory remote:
  first push    every file is new (journal of N rows written, N jobs run)
  no-op push    nothing changed (N rows read back a page at a time)
  1% changed    N/100 files rewritten
and rsync -a on the same tree for the first copy and the no-op, as the reference.
Peak memory is the child's own maximum resident set (wait4's ru_maxrss).

Usage: scripts/bench-scale.py [--files N] [--work DIR] [--keep]
Writes bench-results/scale.md. Run by `make bench-scale` after a release build.
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

FERRY = os.environ.get("FERRY_BIN", ".build/release/ferry")


def run_measured(command):
    """Runs a command; returns (seconds, peak RSS in MiB). Fails loudly on a non-zero exit."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        process = subprocess.Popen(command, stdout=devnull, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        error = process.stderr.read().decode(errors="replace")
        process.stderr.close()
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"bench-scale: {' '.join(command)} exited {process.returncode}: {error.strip()[-400:]}")
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=int(os.environ.get("SCALE_FILES", "1000000")))
    parser.add_argument("--work", help="folder for the data (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the data afterwards")
    args = parser.parse_args()
    if not os.path.exists(FERRY):
        sys.exit(f"bench-scale: {FERRY} not found; run `swift build -c release` first")

    work = args.work or tempfile.mkdtemp(prefix="ferry-scale-")
    os.makedirs(work, exist_ok=True)
    src, dst, state, mirror = (os.path.join(work, name) for name in ("src", "dst", "state", "rsync-dst"))
    rows = []
    try:
        if not os.path.isdir(src):
            make_tree(src, args.files)
        for folder in (dst, state, mirror):
            shutil.rmtree(folder, ignore_errors=True)
        push = [FERRY, "push", src, "--to", dst, "--state", state, "--json"]

        def measure(label, command, tool):
            subprocess.run(["sync"], check=True)
            seconds, rss = run_measured(command)
            rows.append((label, tool, seconds, rss))
            print(f"bench-scale: {label} {tool}: {seconds:.1f} s, {rss:.0f} MiB", file=sys.stderr)

        measure("first push", push, "ferry")
        if shutil.which("rsync"):
            measure("first push", ["rsync", "-a", src + "/", mirror + "/"], "rsync -a")
        measure("no-op push", push, "ferry")
        if shutil.which("rsync"):
            measure("no-op push", ["rsync", "-a", src + "/", mirror + "/"], "rsync -a")
        changed = touch_share(src, args.files, 0.01)
        measure(f"{changed:,} changed", push, "ferry")
        if shutil.which("rsync"):
            measure(f"{changed:,} changed", ["rsync", "-a", src + "/", mirror + "/"], "rsync -a")
        journal = os.path.join(state, "journal.sqlite")
        journal_mib = os.path.getsize(journal) / (1 << 20) if os.path.exists(journal) else 0
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)

    lines = [f"### {args.files:,} small files, local-directory remote (journal {journal_mib:.0f} MiB)", "",
             "| case | tool | seconds | peak RSS (MiB) | tool ÷ ferry (time) |", "|---|---|---:|---:|---:|"]
    ferry_times = {label: seconds for label, tool, seconds, _ in rows if tool == "ferry"}
    for label, tool, seconds, rss in rows:
        ratio = "" if tool == "ferry" else f"{seconds / ferry_times[label]:.2f}"
        lines.append(f"| {label} | {tool} | {seconds:.1f} | {rss:.0f} | {ratio} |")
    table = "\n".join(lines)
    os.makedirs("bench-results", exist_ok=True)
    with open(os.path.join("bench-results", "scale.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
