#!/usr/bin/env python3
"""Local-directory benchmark: ferry against cp, rsync and rclone on the same data.

Prepares the data once, runs each tool 5 times (BENCH_RUNS) on a fresh target, the last
run's target moved aside until the end rather than removed, the tools taking turns
(and the no-op case on an up-to-date target), and prints a Markdown table of medians and
ratios to stdout and to bench-results/local.md. Run by `make bench` after a release build.

The `exec` case pushes the small files through the example external plugin
(Plugins/ContentStorePlugin/ferry-backend-cas, `type: exec:cas`) and compares that with
ferry's built-in local backend: the ratio is the plugin's time over the local one's.
The `encrypted` cases push the same data to the built-in local backend with and without
`encryption:` (docs/encryption.md); the ratio is the encrypted push's time over the plain one's.
BENCH_CASES=small,big,noop,exec,encrypted picks cases (default: all); BENCH_DIR the folder
(and so the disk) the data and copies go in (default: the system's temporary folder).

The small case also times what separates ferry from `rsync -a`: `rsync -a` followed by one
`sync -f` (the least a copy costs when its files are to be on disk when it ends), and
ferry with its flushes turned into no-ops (scripts/bench-noflush.c through LD_PRELOAD;
a diagnostic, not a mode ferry has).
"""
import itertools, os, shutil, statistics, subprocess, sys, tempfile, time, platform

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_table import write_table  # noqa: E402

FERRY = os.environ.get("FERRY_BIN", ".build/release/ferry")
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
CASES = set(os.environ.get("BENCH_CASES", "small,big,noop,exec,encrypted").split(","))
SMALL_COUNT = int(os.environ.get("BENCH_SMALL_COUNT", "2000"))
PLUGIN_DIR = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Plugins", "ContentStorePlugin"))


def make_small(root, count=2000, size=4096):
    for i in range(count):
        folder = os.path.join(root, f"d{i // 200:02d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"IMG_{i:05d}.jpg"), "wb") as f:
            f.write(os.urandom(size))


def make_big(root, size=1 << 30):
    os.makedirs(root, exist_ok=True)
    chunk = os.urandom(1 << 20)
    with open(os.path.join(root, "VID_0001.mp4"), "wb") as f:
        for _ in range(size >> 20):
            f.write(chunk)


def build_noflush(work):
    """scripts/bench-noflush.c built into `work`; None (the row left out) without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("clang")
    if compiler is None:
        return None
    library = os.path.join(work, "noflush.so")
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-noflush.c")
    built = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", library, source], capture_output=True)
    return library if built.returncode == 0 else None


def interleaved(commands, prepare=lambda: None, environments=None):
    """Medians of RUNS rounds, each round running every command once, in turn (starting
    with the next one each round): a ratio of two tools run one after the other, all of
    one first, measured the disk's moods as much as the tools (2,000 encrypted small
    files came out 1.3 to 1.9 times the plain push, code unchanged). Every case is timed
    this way."""
    samples = {name: [] for name in commands}
    names = list(commands)
    for round in range(RUNS):
        for name in names[round % len(names):] + names[:round % len(names)]:
            prepare()
            subprocess.run(["sync"], check=True)
            start = time.perf_counter()
            subprocess.run(commands[name], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=(environments or {}).get(name))
            samples[name].append(time.perf_counter() - start)
    for name, values in samples.items():
        print(f"{name}: {' '.join(f'{v:.2f}' for v in values)}", file=sys.stderr)
    return {name: statistics.median(values) for name, values in samples.items()}


def main():
    if not os.path.exists(FERRY):
        sys.exit(f"bench: {FERRY} not found; run `swift build -c release` first")
    work = tempfile.mkdtemp(prefix="ferry-bench-", dir=os.environ.get("BENCH_DIR"))
    have_rclone = shutil.which("rclone") is not None
    rsync_fsyncs = "--fsync" in subprocess.run(["rsync", "--help"], capture_output=True, text=True).stdout
    rows = []
    try:
        noflush = build_noflush(work) if "small" in CASES else None
        small, big = os.path.join(work, "small"), os.path.join(work, "big")
        make_small(small, count=SMALL_COUNT)
        if "big" in CASES or "encrypted" in CASES:
            make_big(big)
        dst, state = os.path.join(work, "dst"), os.path.join(work, "state")

        # The last run's copy and state are moved aside, not removed, until the end: on
        # ext4 without a journal (this VM's disk) the first writer after many deletes
        # waits while the inode allocator skips the freed inodes, and removing a 2,000-file
        # copy before each run charged that wait to whichever tool came next.
        aside = os.path.join(work, "aside")
        os.makedirs(aside)
        moved = itertools.count()

        def fresh():
            for path in (dst, state):
                if os.path.lexists(path):
                    os.rename(path, os.path.join(aside, str(next(moved))))

        small_label = f"{SMALL_COUNT:,} × 4 KiB files"
        for key, label, src in [("small", small_label, small), ("big", "one 1 GiB file", big)]:
            if key not in CASES:
                continue
            commands = {
                "ferry": [FERRY, "push", src, "--to", dst, "--state", state, "--transfers", "4"],
                "cp -r": ["cp", "-r", src, dst],
                "rsync -a": ["rsync", "-a", src + "/", dst + "/"],
            }
            if have_rclone:
                commands["rclone copy"] = ["rclone", "copy", "--transfers", "4", src, dst]
            environments = {}
            if key == "small" and rsync_fsyncs:
                # What rsync takes when it too leaves each file on disk (as ferry does)
                # before it is done: the price of durability, not a goal.
                commands["rsync -a --fsync"] = ["rsync", "-a", "--fsync", src + "/", dst + "/"]
            if key == "small":
                # One flush at the end: the files are on disk when it returns, but a crash
                # during the copy leaves named files without their bytes, which ferry's
                # flush before naming rules out.
                commands["rsync -a, then sync -f"] = ["sh", "-c", 'rsync -a "$0/" "$1/" && sync -f "$1"', src, dst]
                if noflush:
                    commands["ferry, flushes made no-ops (diagnostic)"] = commands["ferry"]
                    environments["ferry, flushes made no-ops (diagnostic)"] = dict(os.environ, LD_PRELOAD=noflush)
            rows.append((label, interleaved(commands, fresh, environments)))

        if "exec" in CASES:
            rows.append((f"{small_label}: exec:cas plugin vs local backend", exec_case(work, small, dst, state, fresh)))

        if "encrypted" in CASES:
            rows.append((f"{small_label}: encrypted vs plain local backend", encrypted_case(work, small, dst, state, fresh)))
            rows.append(("one 1 GiB file: encrypted vs plain local backend", encrypted_case(work, big, dst, state, fresh)))

        if "noop" in CASES:
            # No-op: the target is already up to date.
            fresh()
            subprocess.run([FERRY, "push", small, "--to", dst, "--state", state], check=True, stdout=subprocess.DEVNULL)
            commands = {
                "ferry": [FERRY, "push", small, "--to", dst, "--state", state],
                "rsync -a": ["rsync", "-a", small + "/", dst + "/"],
            }
            if have_rclone:
                commands["rclone copy"] = ["rclone", "copy", "--transfers", "4", small, dst]
            rows.append((f"no-op push, {SMALL_COUNT:,} files", interleaved(commands)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_results(rows)


def exec_case(work, small, dst, state, fresh):
    """The same push to the built-in local backend and through ferry-backend-cas (Python),
    both from a config file with 4 transfers; `ferry` is the local backend's time."""
    config = os.path.join(work, "exec.yml")
    with open(config, "w") as f:
        f.write(f"""remotes:
  plugin:
    type: exec:cas
    path: {dst}
    plugin_dir: {PLUGIN_DIR}
  local:
    type: local
    path: {dst}
folders:
  via-plugin:
    path: {small}
    remote: plugin
  via-local:
    path: {small}
    remote: local
transfers:
  max: 4
""")
    return interleaved({
        "ferry": [FERRY, "push", "via-local", "--config", config, "--state", state],
        "ferry exec:cas": [FERRY, "push", "via-plugin", "--config", config, "--state", state],
    }, fresh)


def encrypted_case(work, src, dst, state, fresh):
    """The same push to the built-in local backend, plain and with `encryption:` (a key
    file, encrypted names), 4 transfers; `ferry` is the plain push's time."""
    key = os.path.join(work, "bench.key")
    if not os.path.exists(key):
        subprocess.run([FERRY, "keygen", key], check=True, stdout=subprocess.DEVNULL)
    config = os.path.join(work, "encrypted.yml")
    with open(config, "w") as f:
        f.write(f"""remotes:
  plain:
    type: local
    path: {dst}
  vault:
    type: local
    path: {dst}
    encryption:
      key_file: {key}
transfers:
  max: 4
""")
    return interleaved({
        "ferry": [FERRY, "push", src, "--to", "plain", "--config", config, "--state", state],
        "ferry encrypted": [FERRY, "push", src, "--to", "vault", "--config", config, "--state", state],
    }, fresh)


def write_results(rows):
    write_table(
        f"Local-directory benchmark, medians of {RUNS} runs, same disk ({platform.node()}, "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}). Ratio = the tool's time / ferry's "
        "(ferry's speed relative to the tool; above 1: ferry is faster). ferry flushes every file to disk before naming it; cp, rclone and rsync -a do not, rsync -a --fsync does.",
        rows, "local.md")
    return 0

if __name__ == "__main__":
    main()
