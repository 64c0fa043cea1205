#!/usr/bin/env python3
"""No-op pushes of a large tree, alternated with rsync -a several times, then 1% changed.

The no-op is the case whose ratio to rsync sits closest to 1, so it is measured in
alternation, round after round, rather than once as in bench-scale.py. Uses bench-scale's
tree and measurement (scripts/bench_tree.py, bench_process.py: peak RSS from GNU time).

Usage: scripts/bench-scale-noop.py [--files N] [--rounds R] [--work DIR]
  (default 1,000,000 files, 3 rounds, a new temporary folder, removed afterwards unless
  --work is given). FERRY_BIN picks the binary (default .build/release/ferry).
"""
import argparse, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_process  # noqa: E402
import bench_tree  # noqa: E402

FERRY = os.environ.get("FERRY_BIN", ".build/release/ferry")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="ferry-scale-noop-")
    src, dst, state, mirror = (os.path.join(work, name) for name in ("src", "dst", "state", "rsync-dst"))

    def measure(label, command):
        subprocess.run(["sync"], check=True)
        seconds, rss = bench_process.run_measured(command)
        print(f"| {label} | {seconds:.2f} | {rss:.0f} | {os.getloadavg()[0]:.2f} |", flush=True)

    try:
        if not os.path.isdir(src):
            bench_tree.make_tree(src, args.files)
        push = [FERRY, "push", src, "--to", dst, "--state", state, "--json"]
        rsync = ["rsync", "-a", src + "/", mirror + "/"]
        print(f"{args.files:,} files\n\n| case | seconds | peak RSS (MiB) | load |\n|---|---:|---:|---:|")
        if not os.path.isdir(state):
            measure("first push, ferry", push)
        if not os.path.isdir(mirror):
            measure("first push, rsync -a", rsync)
        for number in range(1, args.rounds + 1):
            measure(f"no-op push {number}, ferry", push)
            measure(f"no-op push {number}, rsync -a", rsync)
        changed = bench_tree.change_files(src, bench_tree.spread(args.files, args.files // 100))
        measure(f"{changed:,} changed, ferry", push)
        measure(f"{changed:,} changed, rsync -a", rsync)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
