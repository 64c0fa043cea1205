#!/usr/bin/env python3
"""Archive-bundle benchmark: N small cold files (200-500 bytes, modified in 2023) pushed to
nginx WebDAV and pulled back into an empty folder with a fresh state folder, once as plain
files and once as bundles (archive: in a config.yml). Counts the server's requests (its
access log) and times each run. Writes a Markdown table to stdout and
bench-results/bundles.md.

    python3 scripts/bench-bundles.py            # 5,000 files, .build/release/ferry
    BENCH_FILES=1000 FERRY_BIN=.build/debug/ferry python3 scripts/bench-bundles.py
"""
import os, platform, shutil, subprocess, sys, tempfile, time

FERRY = os.path.abspath(os.environ.get("FERRY_BIN", ".build/release/ferry"))
FILES = int(os.environ.get("BENCH_FILES", "5000"))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-servers")


def log_lines(server):
    with open(os.path.join(server, "access.log")) as f:
        return sum(1 for _ in f)


def timed(command, cwd, server):
    before = log_lines(server)
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, log_lines(server) - before


def main():
    if not os.access(FERRY, os.X_OK):
        sys.exit(f"bench: {FERRY} is not built (swift build -c release, or set FERRY_BIN)")
    work = tempfile.mkdtemp(prefix="ferry-bundlebench-")
    os.chmod(work, 0o755)
    server = os.path.join(work, "nginx")
    origin = subprocess.run(["bash", os.path.join(SCRIPTS, "start-nginx.sh"), server],
                            check=True, capture_output=True, text=True).stdout.strip()
    rows = []
    try:
        src = os.path.join(work, "src")
        for i in range(FILES):
            folder = os.path.join(src, f"year {2000 + i % 7}", f"month {i % 12:02d}")
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, f"note_{i}.txt")
            with open(path, "wb") as f:
                f.write(os.urandom(200 + i % 300))
            os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
        for label, archive in (("plain files", ""), ("bundles (tar.zst, 1M)", "archive:\n  bundle_size: 1M\n")):
            case = os.path.join(work, label.split()[0])
            os.makedirs(case)
            remote = f"{origin}/dav/{label.split()[0]}"
            with open(os.path.join(case, "config.yml"), "w") as f:
                f.write(f"remotes:\n  nas:\n    type: webdav\n    url: {remote}\n"
                        f"folders:\n  cold:\n    path: {src}\n    remote: nas\n{archive}")
            push = timed([FERRY, "push", "cold", "--state", "state"], case, server)
            noop = timed([FERRY, "push", "cold", "--state", "state"], case, server)
            pull = timed([FERRY, "pull", "restored", "--from", "dav://" + remote[len("http://"):],
                          "--state", "fresh-state"], case, server)
            diff = subprocess.run(["diff", "-r", src, os.path.join(case, "restored")], capture_output=True)
            if diff.returncode != 0:
                sys.exit(f"bench: the pulled tree differs ({label})")
            rows.append((label, push, noop, pull))
    finally:
        subprocess.run(["bash", os.path.join(SCRIPTS, "stop.sh"), server])
        shutil.rmtree(work, ignore_errors=True)

    lines = [f"Archive bundles: {FILES:,} files of 200-500 bytes to nginx WebDAV on 127.0.0.1, one run each "
             f"({platform.node()}, {os.cpu_count()} cores, {os.path.basename(os.path.dirname(FERRY))} build, "
             f"{time.strftime('%Y-%m-%d')}).",
             "", "| case | push s | push requests | no-op push s | no-op requests | pull s | pull requests |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for label, push, noop, pull in rows:
        lines.append(f"| {label} | {push[0]:.2f} | {push[1]} | {noop[0]:.2f} | {noop[1]} | {pull[0]:.2f} | {pull[1]} |")
    table = "\n".join(lines)
    os.makedirs("bench-results", exist_ok=True)
    with open(os.path.join("bench-results", "bundles.md"), "w") as f:
        f.write(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
