#!/usr/bin/env python3
"""Scale benchmark: time and peak memory of ferry and the reference tools on folders of very
many small files (1 to 64 bytes each, 1,000 per folder; scripts/bench_tree.py).

Three parts (--cases), each a table:
  push    against a local-directory remote, `rsync -a` followed by `sync -f` (ferry's files
          are on disk when it exits) as the reference, at 10,000, 100,000
          and 1,000,000 files by default:
            first push --dry-run  the plan of N new files, shown and not written
            first push       every file is new (journal of N rows written, N jobs run)
            no-op push       nothing changed (the remote side known from the journal: no listing)
            no-op push --full  the same with a full listing of the remote
            1% changed       N/100 files rewritten
            pull             the remote into an empty folder with a fresh state
            sync, no-op      a two-way sync of the pulled folder, run twice (the second is timed)
  sync    two-way sync, ferry against unison and rclone bisync: first sync, no-op sync,
          1,000 files changed on each side (scripts/bench_scale_sync.py); 100,000 files by default
  daemon  `ferry watch` of N files to a local folder: all sent on a first start, ready after
          a restart, idle CPU over a minute, peak RSS, a new file's delay to the remote
          (scripts/bench_scale_daemon.py); 100,000 files by default
--files N[,N...] sets the sizes of every part. Peak memory is each tool's own maximum
resident set (GNU time's, see bench_process.measured). --one-core runs every tool, ferry and the references
alike, under `taskset -c 0`. Any tool that exits non-zero, and any run that leaves its
trees different from what they should hold, stops the benchmark with its last output.

Usage: scripts/bench-scale.py [--files N[,N...]] [--cases push,sync,daemon] [--one-core]
                              [--work DIR] [--keep]
Appends a section to bench-results/scale.md (the commit, the date, how many cores, and
the load average before and after every row). Run by `make bench-scale` after a release
build.
"""
import argparse, datetime, os, shlex, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_process  # noqa: E402
import bench_scale_daemon  # noqa: E402
import bench_scale_sync  # noqa: E402
import bench_tree  # noqa: E402

FERRY = os.environ.get("FERRY_BIN", ".build/release/ferry")
PARTS = ("push", "sync", "daemon")
DEFAULT_SIZES = {"push": [10_000, 100_000, 1_000_000], "sync": [100_000], "daemon": [100_000]}
# Trees of N files each part writes (kept until the end, see main): push src, dst, the
# rsync copy, the pulled folder and rsync's; sync a pair per tool; daemon the folder and
# its remote.
TREES = {"push": 5, "sync": 6, "daemon": 2}
# A file of 1 to 64 bytes takes a 4 KiB block and an inode; folders, journals, unison's
# archive and rclone's listings add the rest (all three parts at 100,000 files: 1,303,588
# inodes in 5.2 GiB, 4,282 bytes each).
BYTES_PER_FILE = 4096 + 512


# The reference for small local files (docs/decisions.md): ferry exits with every file on
# disk, so rsync's time counts until its files are too (one syncfs of the target's disk).
RSYNC = "rsync -a, then sync -f"


def rsync_then_flush(source, target):
    return ["sh", "-c", 'rsync -a "$0/" "$1/" && sync -f "$1"', source, target]


def push_rows(count, work):
    """The push part at one size: rows (case, tool, seconds, peak MiB, journal MiB, load
    before, load after). Its data is left in `work`; main removes every size's data at
    the end."""
    os.makedirs(work, exist_ok=True)
    src, dst, state, mirror = (os.path.join(work, name) for name in ("src", "dst", "state", "rsync-dst"))
    pulled, pull_state, rsync_pulled = (os.path.join(work, name) for name in ("pulled", "pull-state", "rsync-pulled"))
    rows = []

    def journal_mib(folder):
        path = os.path.join(folder, "journal.sqlite")
        return os.path.getsize(path) / (1 << 20) if os.path.exists(path) else 0

    def measure(label, command, tool, journal_of=None):
        subprocess.run(["sync"], check=True)
        before = bench_process.load()
        seconds, rss = bench_process.run_measured(command)
        rows.append((label, tool, seconds, rss, journal_mib(journal_of) if journal_of else None,
                     before, bench_process.load()))
        print(f"bench-scale: {count:,} {label} {tool}: {seconds:.1f} s, {rss:.0f} MiB", file=sys.stderr)

    rsync = shutil.which("rsync") is not None
    if not os.path.isdir(src):
        bench_tree.make_tree(src, count)
    for folder in (dst, state, mirror, pulled, pull_state, rsync_pulled):
        shutil.rmtree(folder, ignore_errors=True)
    push = [FERRY, "push", src, "--to", dst, "--state", state, "--json"]
    # Writes nothing: its peak is what a plan of N new files holds (every job, before).
    measure("first push --dry-run", push + ["--dry-run"], "ferry")
    measure("first push", push, "ferry", state)
    if rsync:
        measure("first push", rsync_then_flush(src, mirror), RSYNC)
    measure("no-op push", push, "ferry", state)
    if rsync:
        measure("no-op push", rsync_then_flush(src, mirror), RSYNC)
    measure("no-op push --full", push + ["--full"], "ferry", state)
    changed = bench_tree.change_files(src, bench_tree.spread(count, count // 100))
    measure(f"{changed:,} changed", push, "ferry", state)
    if rsync:
        measure(f"{changed:,} changed", rsync_then_flush(src, mirror), RSYNC)
    measure("pull into empty", [FERRY, "pull", pulled, "--from", dst, "--state", pull_state, "--json"], "ferry", pull_state)
    if rsync:
        measure("pull into empty", rsync_then_flush(dst, rsync_pulled), RSYNC)
    sync = [FERRY, "sync", pulled, "--to", dst, "--state", pull_state, "--json"]
    bench_process.run_measured(sync)
    measure("sync, no-op", sync, "ferry", pull_state)
    if rsync:
        measure("sync, no-op", rsync_then_flush(dst, rsync_pulled), RSYNC)
    return rows


def results_table(sized_rows, with_journal):
    """Rows of (label, tool, seconds, peak RSS, [journal MiB,] load before, load after) by size,
    with each tool's time as a ratio to ferry's in the same case."""
    journal_head = " journal (MiB) |" if with_journal else ""
    lines = [f"| files | case | tool | seconds | peak RSS (MiB) |{journal_head} tool ÷ ferry (time) | load before → after |",
             "|---:|---|---|---:|---:|" + ("---:|" if with_journal else "") + "---:|---|"]
    for count, rows in sized_rows:
        ferry_times = {label: seconds for label, tool, seconds, *_ in rows if tool == "ferry"}
        for label, tool, seconds, rss, *rest in rows:
            journal, before, after = rest if with_journal else (None, *rest)
            ratio = "" if tool == "ferry" else f"{seconds / ferry_times[label]:.2f}"
            journal_cell = "" if not with_journal else (" |" if journal is None else f" {journal:.0f} |")
            lines.append(f"| {count:,} | {label} | {tool} | {seconds:.2f} | {rss:.0f} |{journal_cell} {ratio} "
                         f"| {before:.1f} → {after:.1f} |")
    return lines


def commit():
    """The checked-out commit, marked when tracked files differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" with uncommitted changes" if dirty else "")


def check_room(base, plan):
    """Stops before anything is written when the disk holding `base` has not the room (bytes
    and inodes) every part and size asked for needs at once."""
    files = sum(TREES[part] * count for part, sizes in plan for count in sizes)
    stat = os.statvfs(base)
    free_bytes, free_inodes = stat.f_bavail * stat.f_frsize, stat.f_favail
    need_bytes = files * BYTES_PER_FILE
    if need_bytes > free_bytes or files * 1.01 > free_inodes:
        sys.exit(f"bench-scale: {base} has {free_bytes / 1e9:.1f} GB and {free_inodes:,} inodes free; these parts "
                 f"and sizes write about {files:,} files ({need_bytes / 1e9:.1f} GB), all kept until the end. "
                 "Run the parts one at a time (--cases, SCALE_CASES=) or give --work on a larger disk.")
    print(f"bench-scale: about {files:,} files ({need_bytes / 1e9:.1f} GB) to write, "
          f"{free_bytes / 1e9:.1f} GB free in {base}", file=sys.stderr)


def append_report(lines):
    os.makedirs("bench-results", exist_ok=True)
    with open(os.path.join("bench-results", "scale.md"), "a") as f:
        f.write("\n".join(lines) + "\n\n")
    print("\n".join(lines) + "\n", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default=os.environ.get("SCALE_FILES"),
                        help="tree sizes for every part, comma-separated (default: push 10000,100000,1000000; "
                             "sync and daemon 100000)")
    parser.add_argument("--cases", default=",".join(PARTS), help="parts to run, comma-separated: push,sync,daemon")
    parser.add_argument("--one-core", action="store_true", help="run every tool under `taskset -c 0`")
    parser.add_argument("--work", help="folder for the data (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the data afterwards")
    args = parser.parse_args()
    if not os.path.exists(FERRY):
        sys.exit(f"bench-scale: {FERRY} not found; run `swift build -c release` first")
    parts = [part.strip() for part in args.cases.split(",") if part.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        sys.exit(f"bench-scale: unknown part {', '.join(unknown)} (expected {', '.join(PARTS)})")
    if args.files:
        sizes = [int(text.replace("_", "")) for text in args.files.split(",") if text.strip()]
        plan = [(part, sizes) for part in parts]
    else:
        plan = [(part, DEFAULT_SIZES[part]) for part in parts]
    if args.one_core:
        if shutil.which("taskset") is None:
            sys.exit("bench-scale: taskset not found (util-linux); run `bash scripts/bootstrap.sh bench`")
        bench_process.pin_to_one_core()
    if "sync" in parts:
        bench_scale_sync.check_installed()
    ferry = os.path.abspath(FERRY)

    base = args.work or tempfile.mkdtemp(prefix="ferry-scale-")
    os.makedirs(base, exist_ok=True)
    check_room(base, plan)
    now = datetime.datetime.now(datetime.timezone.utc)
    append_report([f"## make bench-scale — {now:%Y-%m-%d %H:%M} UTC, commit {commit()}, {bench_process.cpu_mode()}", "",
                   f"`{shlex.join(['scripts/bench-scale.py'] + sys.argv[1:])}` with {FERRY} on {os.uname().nodename}; "
                   f"load average {bench_process.load():.1f} at the start."])
    try:
        for part, sizes in plan:
            # Every size's data stays until the end: on ext4 without a journal (this VM's
            # disk) a file created within a minute or five of mass deletes waits while the
            # inode allocator skips the freed inodes, and the next size's first push, the
            # first writer after the cleanup, stalled for it.
            if part == "push":
                rows = [(count, push_rows(count, os.path.join(base, f"n{count}"))) for count in sizes]
                lines = ["### Push, pull and sync to a local folder; rsync -a, then sync -f, the reference", ""] + results_table(rows, with_journal=True)
            elif part == "sync":
                rows = [(count, bench_scale_sync.measure(count, os.path.join(base, f"n{count}", "sync"), ferry))
                        for count in sizes]
                lines = ["### Two-way sync: ferry sync, unison -batch -auto -times, rclone bisync", ""] + results_table(rows, with_journal=False)
            else:
                rows = [(count, bench_scale_daemon.measure(count, os.path.join(base, f"n{count}", "daemon"), ferry))
                        for count in sizes]
                lines = ([f"### Daemon: ferry watch to a local folder, quiet period {bench_scale_daemon.QUIET_PERIOD_SECONDS} s", ""]
                         + bench_scale_daemon.table(rows))
            append_report(lines + ["", f"Finished {datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC."])
    except SystemExit as stop:
        # The section says the run stopped, and why, rather than ending with no rows.
        append_report([f"**Stopped** at {datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC:", "",
                       "```", str(stop.code), "```"])
        raise
    finally:
        if not args.work and not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
