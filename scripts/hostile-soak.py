#!/usr/bin/env python3
"""Ferry against hostile remotes and plugins, many times, with its memory measured
(`make hostile`, and the end of `make soak`; not part of `make test`).

Each trial runs ferry (FERRY_BIN, default .build/release/ferry) against something that
lies, with seeded random sizes, and measures the run's peak resident memory (the
figure GNU time gives for the ferry process). A trial passes when ferry fails the way
docs/reliability.md ("Hostile remotes") says, nothing is written past the bound, and
the peak stays under --memory-bound (default 320 MiB):

  oversize    a WebDAV server lists a file as N bytes and streams far more (chunked, or
              announced); nothing may land under the final name, no partial past N
  deep        a tree without end in depth (limits.remote_depth)
  wide        a tree without end in width (limits.remote_entries)
  bomb        a bundle whose member holds gigabytes of zeros while its manifest says a
              few bytes; run with a file-size limit (RLIMIT_FSIZE) that a full
              extraction would hit
  manifest    a bundle manifest padded past 16 MiB (refused unread), and one just under
              it with real members (read: the largest memory a manifest can take)
  flood       an exec plugin that writes millions of short lines before its answers
  names       names with C1 controls, bidi overrides, and NFC/NFD twins: printed
              escaped, the twins failed

Prints a Markdown table on stdout (one line per trial on stderr) and writes it to
bench-results/hostile-soak.md; exits 1 if a trial failed. `--seed S` replays a run,
`--only KIND,...` picks kinds, `--trials N` sets the trials per kind (default 3).
"""
import argparse, json, os, random, resource, shutil, signal, subprocess, sys, tempfile, time, unicodedata

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVERS = os.path.join(REPO, "scripts", "test-servers")
KINDS = ["oversize", "deep", "wide", "bomb", "manifest", "flood", "names"]
MiB, GiB = 1 << 20, 1 << 30
RUN_TIMEOUT = 300
QUICK_RETRIES = "retry:\n  attempts: 2\n  base_delay: 50ms\n  max_delay: 100ms\n"


def log(message):
    print(message, file=sys.stderr, flush=True)


class Run:
    """One ferry process: exit status, output, peak resident memory in KiB, seconds."""

    def __init__(self, status, stdout, stderr, peak_kib, seconds):
        self.status, self.stdout, self.stderr, self.peak_kib, self.seconds = status, stdout, stderr, peak_kib, seconds


def run_ferry(ferry, arguments, cwd, env=None, file_size_limit=None):
    """Runs ferry to the end and measures its peak RSS with GNU time. Not wait4 from here:
    Linux carries a process's peak over fork and execve, so ferry's would start at this
    script's own (bench_process.measured)."""
    environment = dict(os.environ)
    environment.update(env or {})

    def limits():
        if file_size_limit:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    out_path, err_path = os.path.join(cwd, "out.txt"), os.path.join(cwd, "err.txt")
    peak_path = os.path.join(cwd, "peak.txt")
    began = time.monotonic()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        # A session of its own: a run over its time is killed with GNU time around it.
        process = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", peak_path, ferry] + arguments, cwd=cwd,
                                   env=environment, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   preexec_fn=limits, start_new_session=True)
        try:
            code = process.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = -1
    try:
        with open(peak_path) as f:
            peak_kib = int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        peak_kib = 0  # killed before time could write it: the timeout is the finding
    with open(out_path, errors="replace") as out, open(err_path, errors="replace") as err:
        return Run(code, out.read(), err.read(), peak_kib, time.monotonic() - began)


class Background:
    """A helper process printing its URL on the first line of stdout (servers, proxies)."""

    def __init__(self, arguments, folder):
        os.makedirs(folder, exist_ok=True)
        self.url_file = os.path.join(folder, "url")
        self.process = subprocess.Popen(arguments, stdout=open(self.url_file, "w"), stderr=subprocess.DEVNULL,
                                        stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            text = open(self.url_file).read()
            if text.endswith("\n"):
                self.url = text.strip()
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"{arguments[1]} did not start")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def hostile_server(mode, folder, *options):
    return Background([sys.executable, os.path.join(SERVERS, "hostile-server.py"), mode] + list(options), folder)


def files_below(root):
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = os.path.getsize(path)
    return found


def has_raw_controls(text):
    return any(0x80 <= ord(c) <= 0x9F or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 or
               (ord(c) < 0x20 and c not in "\t\n") for c in text)


class HostileSoak:
    def __init__(self, ferry, work, options):
        self.ferry, self.work, self.options = ferry, work, options
        self.trials = []
        self.counter = 0

    def folder(self, name):
        self.counter += 1
        path = os.path.join(self.work, f"{self.counter:03d}-{name}")
        os.makedirs(path)
        return path

    def record(self, kind, detail, run, problems):
        if run is not None and run.peak_kib * 1024 > self.options.memory_bound:
            problems.append(f"peak RSS {run.peak_kib // 1024} MiB over the bound {self.options.memory_bound // MiB} MiB")
        trial = {"kind": kind, "detail": detail, "passed": not problems, "problems": problems,
                 "peak_mib": run.peak_kib / 1024 if run else 0, "seconds": run.seconds if run else 0,
                 "exit": run.status if run else None}
        self.trials.append(trial)
        log(f"{'ok  ' if trial['passed'] else 'FAIL'} {kind}: {detail}: exit {trial['exit']}, "
            f"peak {trial['peak_mib']:.0f} MiB, {trial['seconds']:.1f} s" + (f" — {'; '.join(problems)}" if problems else ""))

    def workspace(self, name, config=QUICK_RETRIES):
        folder = self.folder(name)
        with open(os.path.join(folder, "config.yml"), "w") as f:
            f.write(config)
        return folder

    # --- trials ------------------------------------------------------------------------

    def oversize(self, rng):
        listed = rng.choice([0, 5, rng.randrange(1, 1 << 20)])
        body = listed + rng.choice([1, rng.randrange(1, 64 * MiB), rng.randrange(256 * MiB, 1 * GiB)])
        announced = rng.random() < 0.5
        folder = self.workspace("oversize")
        server = hostile_server("oversize", os.path.join(folder, "server"), "--listed", str(listed), "--body", str(body),
                                *(["--with-length"] if announced else []))
        try:
            dav = "dav://" + server.url[len("http://"):] + "/dav/"
            run = run_ferry(self.ferry, ["pull", "out", "--from", dav, "--state", "state"], folder)
        finally:
            server.stop()
        problems = []
        if run.status != 1:
            problems.append(f"exit {run.status}, expected 1")
        if "more than the" not in run.stderr:
            problems.append("no 'more than the N bytes expected' message")
        for name, size in files_below(os.path.join(folder, "out")).items():
            if name == "big.bin":
                problems.append("big.bin landed under its final name")
            if size > listed:
                problems.append(f"{name} holds {size} bytes, more than the listed {listed}")
        self.record("oversize", f"listed {listed} B, sent {body} B ({'announced' if announced else 'chunked'})", run, problems)

    def deep(self, rng):
        levels = rng.choice([0, rng.randrange(300, 3000)])
        depth = rng.choice([None, rng.randrange(10, 128)])
        config = QUICK_RETRIES + (f"limits:\n  remote_depth: {depth}\n" if depth else "")
        folder = self.workspace("deep", config)
        server = hostile_server("deep", os.path.join(folder, "server"), "--levels", str(levels))
        try:
            dav = "dav://" + server.url[len("http://"):] + "/dav/"
            run = run_ferry(self.ferry, ["pull", "out", "--from", dav, "--state", "state"], folder)
        finally:
            server.stop()
        problems = []
        bound = depth or 64
        if run.status != 1 or f"deeper than {bound} levels" not in run.stderr or "limits.remote_depth" not in run.stderr:
            problems.append(f"exit {run.status} without the limits.remote_depth error: {run.stderr.strip()[-200:]}")
        if files_below(os.path.join(folder, "out")):
            problems.append("files were downloaded")
        self.record("deep", f"{'endless' if levels == 0 else levels} levels, remote_depth {bound}", run, problems)

    def wide(self, rng):
        fanout = rng.choice([50, 200, 1000])
        entries = rng.choice([20_000, 100_000, 300_000])
        folder = self.workspace("wide", QUICK_RETRIES + f"limits:\n  remote_entries: {entries}\n")
        server = hostile_server("wide", os.path.join(folder, "server"), "--fanout", str(fanout))
        try:
            dav = "dav://" + server.url[len("http://"):] + "/dav/"
            run = run_ferry(self.ferry, ["pull", "out", "--from", dav, "--state", "state"], folder)
        finally:
            server.stop()
        problems = []
        # Depth first: a narrow fan-out reaches the depth bound before the entries bound.
        if run.status != 1 or not (f"more than {entries} files and folders" in run.stderr
                                   or "limits.remote_depth" in run.stderr):
            problems.append(f"exit {run.status} without a limits.remote_* error: {run.stderr.strip()[-200:]}")
        bound = "entries" if "limits.remote_entries" in run.stderr else "depth"
        self.record("wide", f"fanout {fanout} without end, remote_entries {entries}; stopped by {bound}", run, problems)

    def make_bundle(self, folder, member_size):
        """A real bundle made by ferry itself from a sparse file of `member_size` zeros, in
        the local remote `remote/`; returns the manifest's path."""
        source = os.path.join(folder, "cold")
        os.makedirs(source)
        for index in range(2):
            path = os.path.join(source, f"zeros{index}.bin")
            with open(path, "wb") as f:
                f.truncate(member_size if index == 0 else 10)
            os.utime(path, (1_600_000_000, 1_600_000_000))
        config = QUICK_RETRIES + ("remotes:\n  store:\n    type: local\n    path: remote\n"
                                  "folders:\n  cold:\n    path: cold\n    remote: store\n"
                                  f"archive:\n  older_than: 1d\n  max_file_size: {member_size + 1}\n"
                                  f"  bundle_size: {max(member_size + 4096, 64 << 10)}\n  min_files: 2\n")
        with open(os.path.join(folder, "bundle.yml"), "w") as f:
            f.write(config)
        made = run_ferry(self.ferry, ["push", "cold", "--config", "bundle.yml", "--state", "push-state"], folder)
        if made.status != 0:
            raise RuntimeError(f"making the bundle failed: {made.stderr.strip()[-300:]}")
        bundles = os.path.join(folder, "remote", ".ferry-bundles")
        return next(os.path.join(bundles, n) for n in os.listdir(bundles) if n.endswith(".manifest.json"))

    def bomb(self, rng):
        member = rng.choice([1, 2, 4]) * GiB
        claimed = rng.choice([0, 5, 4096])
        folder = self.workspace("bomb")
        manifest_path = self.make_bundle(folder, member)
        manifest = json.load(open(manifest_path))
        for entry in manifest["members"]:
            if entry["path"] == "zeros0.bin":
                entry["size"] = claimed
                entry["sha256"] = "0" * 64
        json.dump(manifest, open(manifest_path, "w"))
        limit = 64 * MiB
        run = run_ferry(self.ferry, ["pull", "restored", "--from", "remote", "--state", "state", "--json"], folder,
                        file_size_limit=limit)
        problems = []
        if run.status != 1:
            problems.append(f"exit {run.status}, expected 1 (a signal 25 is SIGXFSZ: a file grew past {limit // MiB} MiB)")
        if f"holds more than the {claimed} bytes" not in run.stdout:
            problems.append("no 'holds more than the N bytes' failure")
        if "zeros0.bin" in files_below(os.path.join(folder, "restored")):
            problems.append("the bomb landed under its final name")
        self.record("bomb", f"{member // GiB} GiB member, manifest says {claimed} B", run, problems)

    def manifest(self, rng):
        folder = self.workspace("manifest")
        manifest_path = self.make_bundle(folder, 4096)
        manifest = json.load(open(manifest_path))
        oversized = rng.random() < 0.5
        if oversized:
            padding = rng.randrange(16 * MiB, 256 * MiB)
            with open(manifest_path, "w") as f:
                f.write(json.dumps(manifest) + " " * padding)
            detail = f"padded to {(padding >> 20) + 1} MiB"
        else:
            # Members that are not in the bundle, up to just under the bound: the largest
            # manifest Ferry reads.
            template = dict(manifest["members"][0])
            members = []
            size = 0
            while size < 15 * MiB:
                entry = dict(template, path=f"DCIM/{len(members):09d}/IMG_{len(members):09d}_long_name.jpg")
                entry["entry"] = entry["path"]
                members.append(entry)
                size += len(json.dumps(entry)) + 1
            manifest["members"] += members
            json.dump(manifest, open(manifest_path, "w"))
            detail = f"{len(members)} members, {os.path.getsize(manifest_path) >> 20} MiB"
        run = run_ferry(self.ferry, ["pull", "restored", "--from", "remote", "--state", "state", "--dry-run"], folder)
        problems = []
        if oversized and (run.status != 1 or "a manifest can be" not in run.stderr):
            problems.append(f"exit {run.status} without the manifest-size refusal: {run.stderr.strip()[-200:]}")
        if not oversized and run.status != 0:
            problems.append(f"exit {run.status}: {run.stderr.strip()[-200:]}")
        self.record("manifest", detail, run, problems)

    def flood(self, rng):
        lines = rng.choice([1, 2, 4]) * 1_000_000
        where = rng.choice(["before-hello", "in-list"])
        folder = self.workspace("flood")
        plugin = os.path.join(folder, "ferry-backend-flood")
        with open(plugin, "w") as f:
            f.write(f"""#!/usr/bin/env python3
import json, sys
out = sys.stdout.buffer
def flood():
    chunk = b'{{"type":"x"}}\\n' * 10000
    for _ in range({lines // 10000}):
        out.write(chunk)
    out.flush()
def send(o):
    out.write((json.dumps(o) + "\\n").encode()); out.flush()
if {where == "before-hello"!r}:
    flood()
send({{"type": "hello", "protocol": {{"min": 1, "max": 1}}, "name": "flood", "version": "1", "capabilities": []}})
for line in sys.stdin:
    request = json.loads(line)
    reply = {{"type": "reply", "id": request["id"], "ok": True}}
    if request["op"] == "list":
        if {where == "in-list"!r}:
            flood()
        reply["entries"] = []
    send(reply)
""")
        os.chmod(plugin, 0o755)
        with open(os.path.join(folder, "config.yml"), "a") as f:
            f.write("remotes:\n  flood:\n    type: exec:flood\n    plugin_dir: .\n    stall_timeout: 300\n")
        run = run_ferry(self.ferry, ["ls", "flood"], folder)
        problems = [] if run.status == 0 else [f"exit {run.status}: {run.stderr.strip()[-200:]}"]
        self.record("flood", f"{lines:,} lines {where}", run, problems)

    def names(self, rng):
        pool = ["\u202e", "\u0085", "\u009b", "\u2066", "\u200f", "\u061c"]
        names = [f"n{i}{rng.choice(pool)}x{rng.choice(pool)}.jpg" for i in range(rng.randrange(3, 20))]
        base = rng.choice(["café", "Ünïcödé", "été à Noël"])
        names += [unicodedata.normalize("NFC", base) + ".jpg", unicodedata.normalize("NFD", base) + ".jpg"]
        folder = self.workspace("names")
        server = hostile_server("names", os.path.join(folder, "server"), *sum((["--name", n] for n in names), []))
        try:
            dav = "dav://" + server.url[len("http://"):] + "/dav/"
            listed = run_ferry(self.ferry, ["ls", dav], folder)
            run = run_ferry(self.ferry, ["pull", "out", "--from", dav, "--state", "state", "-v"], folder)
        finally:
            server.stop()
        problems = []
        for what, text in [("ls", listed.stdout + listed.stderr), ("pull", run.stdout + run.stderr)]:
            if has_raw_controls(text):
                problems.append(f"{what} printed a raw control or bidi character")
        if run.status != 1 or run.stderr.count("different Unicode forms") != 2:
            problems.append(f"exit {run.status}; the NFC/NFD twins were not both failed")
        if len(files_below(os.path.join(folder, "out"))) != len(names) - 2:
            problems.append("not every other name was pulled")
        run.peak_kib = max(run.peak_kib, listed.peak_kib)
        self.record("names", f"{len(names) - 2} names with controls, one NFC/NFD pair", run, problems)


def main():
    parser = argparse.ArgumentParser(description="Ferry against hostile remotes and plugins, memory measured.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trials", type=int, default=3, help="trials per kind (default 3)")
    parser.add_argument("--only", default=",".join(KINDS), help=f"kinds to run (default all: {','.join(KINDS)})")
    parser.add_argument("--memory-bound", type=int, default=320 * MiB, help="peak RSS a run may reach, bytes (320 MiB)")
    parser.add_argument("--output", default=os.path.join(REPO, "bench-results", "hostile-soak.md"))
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    options = parser.parse_args()
    kinds = [k for k in options.only.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kind(s) {unknown}; choose from {','.join(KINDS)}")
    binary = os.environ.get("FERRY_BIN", ".build/release/ferry")
    binary = binary if os.path.isabs(binary) else os.path.join(REPO, binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"hostile-soak: {binary} is missing; build it with `swift build -c release`")
    work = tempfile.mkdtemp(prefix="ferry-hostile-", dir="/tmp")
    ferry = os.path.join(work, "ferry")
    shutil.copy2(binary, ferry)
    version = subprocess.run([ferry, "--version"], capture_output=True, text=True).stdout.strip()
    soak = HostileSoak(ferry, work, options)
    began = time.monotonic()
    try:
        for kind in kinds:
            rng = random.Random(f"{options.seed}-{kind}")
            for _ in range(options.trials):
                try:
                    getattr(soak, kind)(rng)
                except RuntimeError as error:
                    soak.record(kind, "setup", None, [str(error)])
    except KeyboardInterrupt:
        log("hostile-soak: interrupted")
        return 130
    finally:
        if options.keep:
            log(f"hostile-soak: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    peak = max((t["peak_mib"] for t in soak.trials), default=0)
    lines = [f"Ferry hostile soak, {time.strftime('%Y-%m-%d %H:%M')}, {version}, `--seed {options.seed} --trials "
             f"{options.trials}`; memory bound {options.memory_bound // MiB} MiB, highest peak {peak:.0f} MiB; "
             f"total {time.monotonic() - began:.0f} s.", "",
             "| kind | trial | exit | peak RSS | seconds | result |", "|---|---|---|---|---|---|"]
    for t in soak.trials:
        lines.append(f"| {t['kind']} | {t['detail']} | {t['exit']} | {t['peak_mib']:.0f} MiB | {t['seconds']:.1f} | "
                     + ("pass" if t["passed"] else "FAIL: " + "; ".join(t["problems"])) + " |")
    text = "\n".join(lines)
    os.makedirs(os.path.dirname(options.output), exist_ok=True)
    with open(options.output, "w") as f:
        f.write(text + "\n")
    print(text)
    return 0 if all(t["passed"] for t in soak.trials) else 1


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
