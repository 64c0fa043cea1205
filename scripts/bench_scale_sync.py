"""The two-way sync rows of `make bench-scale`: `ferry sync` against unison and
`rclone bisync` on a tree of N small files (bench_tree).

Each tool gets its own pair of folders: A holds the tree, B starts empty. Cases, the tools
taking turns in each:
  first sync            A's N files copied to B (rclone bisync's first run needs --resync,
                        and that run is its first sync)
  no-op sync            nothing changed on either side
  1,000 changed on each side  1,000 files of A and 1,000 others of B rewritten (a byte
                        appended), each side's changes brought to the other
After every run both folders of the pair must hold exactly the expected files with the
expected sizes (bench_tree.check), else the benchmark stops.

unison runs with `-batch -auto -times` (modification times kept, as ferry and rclone keep
them) and its archive in a folder of its own (UNISON), so ~/.unison is never read; rclone
with an empty config file and its own --workdir.
"""
import os, shutil, subprocess, sys

import bench_process
import bench_tree

CHANGED_PER_SIDE = 1000


class Tool:
    def __init__(self, name, first, again, env=None):
        self.name, self.first, self.again, self.env = name, first, again, env


def tools(ferry, work):
    """The three tools, each with its pair of folders under `work`: (Tool, A, B)."""
    def pair(name):
        a, b = os.path.join(work, name, "a"), os.path.join(work, name, "b")
        return a, b

    result = []
    a, b = pair("ferry")
    command = [ferry, "sync", a, "--to", b, "--state", os.path.join(work, "ferry", "state"), "--json"]
    result.append((Tool("ferry", command, command), a, b))

    a, b = pair("unison")
    archive = os.path.join(work, "unison", "archive")
    os.makedirs(archive, exist_ok=True)
    command = ["unison", a, b, "-batch", "-auto", "-times", "-ui", "text", "-silent"]
    result.append((Tool("unison", command, command, dict(os.environ, UNISON=archive)), a, b))

    a, b = pair("rclone")
    workdir = os.path.join(work, "rclone", "workdir")
    config = os.path.join(work, "rclone", "rclone.conf")
    os.makedirs(workdir, exist_ok=True)
    open(config, "w").close()
    command = ["rclone", "bisync", a, b, "--workdir", workdir]
    result.append((Tool("rclone bisync", command + ["--resync"], command, dict(os.environ, RCLONE_CONFIG=config)), a, b))
    return result


def check_installed():
    missing = [name for name in ("unison", "rclone") if shutil.which(name) is None]
    if missing:
        sys.exit(f"bench: {', '.join(missing)} not found; run `bash scripts/bootstrap.sh bench`")


def measure(count, work, ferry):
    """Rows (case, tool, seconds, peak MiB, load before, load after) at `count` files; the
    data is left in `work`."""
    check_installed()
    shutil.rmtree(work, ignore_errors=True)
    pairs = tools(ferry, work)
    manifest = None
    for _, a, b in pairs:
        manifest = bench_tree.make_tree(a, count)
        os.makedirs(b)
    rows = []

    def run_case(label, first=False):
        for tool, a, b in pairs:
            subprocess.run(["sync"], check=True)
            before = bench_process.load()
            seconds, rss = bench_process.run_measured(tool.first if first else tool.again, env=tool.env)
            rows.append((label, tool.name, seconds, rss, before, bench_process.load()))
            print(f"bench-scale: {count:,} {label} {tool.name}: {seconds:.1f} s, {rss:.0f} MiB", file=sys.stderr)
            bench_tree.check(f"{tool.name}, {label}", manifest, a, b)

    run_case("two-way: first sync", first=True)
    run_case("two-way: no-op sync")
    changed = min(CHANGED_PER_SIDE, count // 2)
    # Files apart on the two sides (offsets 0 and half a step): no conflicts.
    on_a, on_b = bench_tree.spread(count, changed, 0.0), bench_tree.spread(count, changed, 0.5)
    for _, a, b in pairs:
        bench_tree.change_files(a, on_a)
        bench_tree.change_files(b, on_b)
    manifest = manifest.changed(on_a + on_b)
    run_case(f"two-way: {changed:,} changed on each side")
    return rows
