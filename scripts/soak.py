#!/usr/bin/env python3
"""Ferry's reliability soak suite (`make soak`; not part of `make test`).

Runs ferry (FERRY_BIN, default .build/release/ferry) through the failures it promises to
survive, against a local-directory remote, real WebDAV servers (nginx; Apache for a
few kill trials) and an S3 store (SeaweedFS `weed mini`, a few kill trials), all on
127.0.0.1:

  kill-push   push, kill -9 at a random moment, clean push, byte-for-byte comparison
  kill-pull   the same for pull
  last-byte   push and pull killed the moment a partial file is complete, before its rename
  faults      push and pull through fault-proxy.py (500, 503, reset, delay, lost)
  outage      the WebDAV server stopped for 20 s in the middle of a push
  rewrite     a big file rewritten while it is being uploaded; no torn file, ever
  disk-full   a small tmpfs as the target of a pull and of a push; then made bigger

Prints a Markdown table to stdout (progress and per-trial lines go to stderr), writes
it with the failures' evidence to bench-results/soak.md, and exits 1 if a trial failed.
Kill moments come from a RNG seeded by --seed and are printed, so a failing trial can
be replayed: `scripts/soak.py --seed S --only kill-push --backends nginx`.
See docs/reliability.md.
"""
import argparse, hashlib, json, os, platform, random, shutil, signal, subprocess, sys, tempfile, threading, time
from dataclasses import dataclass, field
from urllib.parse import quote

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVERS = os.path.join(REPO, "scripts", "test-servers")
PART = ".ferry-part"
KiB, MiB = 1 << 10, 1 << 20
KINDS = ["kill-push", "kill-pull", "last-byte", "faults", "outage", "rewrite", "disk-full"]
BACKENDS = ["local", "nginx", "apache", "s3"]
FAULT_KINDS = "500,503,reset,delay,lost"
RUN_TIMEOUT = 180        # seconds any single ferry run may take before it counts as hung
FAULT_RUN_TIMEOUT = 420  # a run through the fault proxy waits out many retries
SERVER_DATA_DIRS = {".DAV"}         # Apache's per-folder metadata, not part of the tree
# Ferry's catalog of the hidden names it put on a remote (docs/reliability.md), at the
# remote folder's top: written by a push of files whose names start with a dot.
FERRY_DATA_DIRS = {".ferry-catalog"}
SERVER_TEMP_PREFIX = ".davfs.tmp"   # Apache's file while a PUT is under way
S3_KEY, S3_SECRET, S3_BUCKET = "ferry-test-key", "ferry-test-secret", "ferry"  # start-s3.sh's


def log(message):
    print(message, file=sys.stderr, flush=True)


def human(n):
    if abs(n) >= MiB:
        return f"{n / MiB:.1f} MiB"
    if abs(n) >= KiB:
        return f"{n / KiB:.0f} KiB"
    return f"{n} B"


# ---------------------------------------------------------------------------------------
# Cleanup: everything started or mounted registers its undo here; run on exit, error,
# Ctrl-C and SIGTERM.

class Cleanup:
    def __init__(self):
        self.actions = []

    def push(self, label, action):
        self.actions.append((label, action))
        return action

    def remove(self, action):
        self.actions = [(label, a) for label, a in self.actions if a is not action]

    def run_all(self):
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut it short
        try:
            self.undo_all()
        finally:
            signal.signal(signal.SIGINT, previous)

    def undo_all(self):
        while self.actions:
            label, action = self.actions.pop()
            try:
                action()
            except Exception as error:  # keep undoing the rest
                log(f"cleanup: {label}: {error}")


CLEANUP = Cleanup()


def on_sigterm(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


# ---------------------------------------------------------------------------------------
# Trees: generation, comparison, temporary files.

def tree_files(root):
    """Relative path -> absolute path of every regular file under root, except
    temporary files and server or ferry metadata."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SERVER_DATA_DIRS and not (folder == root and d in FERRY_DATA_DIRS)]
        for name in names:
            if not name.endswith(PART) and not name.startswith(SERVER_TEMP_PREFIX):
                path = os.path.join(folder, name)
                found[os.path.relpath(path, root)] = path
    return found


def temp_files(root):
    """Ferry's temporary files (.NAME.ferry-part) under root, relative path -> size."""
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(PART):
                path = os.path.join(folder, name)
                found[os.path.relpath(path, root)] = os.path.getsize(path)
    return found


def same_bytes(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            ca, cb = fa.read(MiB), fb.read(MiB)
            if ca != cb:
                return False
            if not ca:
                return True


def compare_trees(source, target):
    """Differences between two trees, byte for byte, as readable lines (empty: identical)."""
    src, dst = tree_files(source), tree_files(target)
    problems = [f"missing: {p}" for p in sorted(src.keys() - dst.keys())]
    problems += [f"extra: {p}" for p in sorted(dst.keys() - src.keys())]
    for path in sorted(src.keys() & dst.keys()):
        if not same_bytes(src[path], dst[path]):
            problems.append(f"differs: {path} ({os.path.getsize(src[path])} vs {os.path.getsize(dst[path])} bytes)")
    return problems


def torn_files(source, target):
    """Files under their final name in target whose bytes are not the source's (a file
    the source lacks counts too)."""
    src = tree_files(source)
    return [p for p, path in tree_files(target).items() if p not in src or not same_bytes(src[p], path)]


def landed_bytes(target):
    """Bytes written into target: final-named files plus temporary files."""
    if not os.path.isdir(target):
        return 0
    return sum(os.path.getsize(p) for p in tree_files(target).values()) + sum(temp_files(target).values())


def make_tree(root, seed):
    """The soak data set: ~100 small files (4–64 KiB), 15 medium (256 KiB–1 MiB), 3
    large (2–6 MiB); names with spaces and non-ASCII letters, some in .thumbnails/.
    Deterministic for a seed. Returns the total size."""
    rng = random.Random(f"tree:{seed}")
    folders = ["", "DCIM/100CANON", "Urlaub 2024/Strand am Meer", "été à Noël", "日本 旅行",
               ".thumbnails", "DCIM/100CANON/.thumbnails"]
    names = ["IMG_{:04d}.jpg", "Foto {} (Kopie).jpg", "café crème {}.heic", "写真_{}.png", "Ünïcödé {}.webp"]
    plan = [(names[i % len(names)].format(i), rng.choice(folders), rng.randint(4 * KiB, 64 * KiB))
            for i in range(100)]
    plan += [(f"VID {i:02d} Ärger.mp4" if i % 2 else f"PANO_{i:02d}.tif", rng.choice(folders[:5]),
              rng.randint(256 * KiB, MiB)) for i in range(15)]
    plan += [(f"Über den Wolken {i}.mov", folders[i % 3], rng.randint(2 * MiB, 6 * MiB)) for i in range(3)]
    total = 0
    for name, folder, size in plan:
        write_file(os.path.join(root, folder, name), rng.randbytes(size))
        total += size
    return total


def write_file(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)


def wait_for_size(path, size, process, timeout):
    """Polls (without sleeping: the moment lasts milliseconds) until path has size bytes;
    False when the process ended first or time ran out."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        try:
            if os.path.getsize(path) == size:
                return True
        except OSError:
            pass
    return False


def copy_tree(source, target):
    shutil.copytree(source, target, copy_function=shutil.copy2)


def remove(path):
    shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# Ferry runs.

@dataclass
class Run:
    """One ferry process: its exit code (None: killed by us), events and timing."""
    command: list
    returncode: int = None
    events: list = field(default_factory=list)
    stderr: str = ""
    seconds: float = 0.0
    killed: bool = False      # we sent SIGKILL (as planned, or because it hung)
    hung: bool = False        # it outlived its time limit

    def of(self, kind):
        return [e for e in self.events if e.get("event") == kind]

    def transferred(self):
        return {e["path"] for e in self.of("transferred")}

    def summary(self):
        found = self.of("summary")
        return found[-1] if found else {}

    def sent_bytes(self):
        summary = self.summary()
        return summary.get("uploaded_bytes", 0) + summary.get("downloaded_bytes", 0)

    def describe(self):
        text = f"exit {self.returncode}" + (" (hung, killed)" if self.hung else "")
        summary = self.summary()
        if summary:
            text += (f", {summary.get('uploaded', 0)} up / {summary.get('downloaded', 0)} down / "
                     f"{summary.get('failed', 0)} failed")
        failures = [f"{e.get('path')}: {e.get('error')}" for e in self.of("failed")][:3]
        if failures:
            text += "; failed: " + "; ".join(failures)
        if self.stderr.strip():
            text += "; stderr: " + self.stderr.strip().splitlines()[-1][:200]
        return text


class Ferry:
    def __init__(self, binary, work):
        self.binary = binary
        self.work = work
        self.logs = os.path.join(work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.env = {**os.environ, "XDG_CONFIG_HOME": os.path.join(work, "xdg-config"),
                    "XDG_STATE_HOME": os.path.join(work, "xdg-state")}
        self.count = 0

    def start(self, args):
        """Starts `ferry ARGS --json` in its own session (Ctrl-C reaches only the soak,
        which then kills it); finish() the result."""
        self.count += 1
        out = os.path.join(self.logs, f"{self.count:04d}.out")
        err = os.path.join(self.logs, f"{self.count:04d}.err")
        command = [self.binary, *args, "--json"]
        with open(os.path.join(self.logs, f"{self.count:04d}.cmd"), "w") as f:
            f.write(" ".join(command) + "\n")
        with open(out, "wb") as fo, open(err, "wb") as fe:
            process = subprocess.Popen(command, stdout=fo, stderr=fe, cwd=self.work, env=self.env,
                                       start_new_session=True)
        undo = CLEANUP.push(f"ferry pid {process.pid}", lambda: kill_process(process))
        return Started(process, Run(command), out, err, time.monotonic(), undo)

    def run(self, args, timeout=RUN_TIMEOUT):
        return self.start(args).finish(timeout)

    def doctor(self, state):
        run = self.run(["doctor", "--state", state], timeout=60)
        return run.returncode


def kill_process(process):
    if process.poll() is None:
        process.kill()
    process.wait()


@dataclass
class Started:
    process: subprocess.Popen
    run: Run
    out: str
    err: str
    began: float
    undo: object

    def finish(self, timeout, planned_kill=False):
        """Waits up to `timeout` seconds. Past it: SIGKILL; that is the plan when
        planned_kill, otherwise the run hung."""
        try:
            self.process.wait(timeout=max(timeout, 0))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            self.run.killed = True
            self.run.hung = not planned_kill
        self.run.seconds = time.monotonic() - self.began
        CLEANUP.remove(self.undo)
        self.run.returncode = None if self.run.killed else self.process.returncode
        with open(self.out, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    self.run.events.append(json.loads(line))
                except ValueError:
                    pass  # a line cut by the kill
        with open(self.err, encoding="utf-8", errors="replace") as f:
            self.run.stderr = f.read()[-4000:]
        return self.run


def snapshot_binary(path, work, wait_seconds=300):
    """Copies the ferry binary into the work folder (another build may replace it during
    the soak); waits for it while it is briefly missing."""
    deadline = time.monotonic() + wait_seconds
    while True:
        copy = os.path.join(work, "ferry")
        try:
            shutil.copy2(path, copy)
            version = subprocess.run([copy, "--version"], capture_output=True, text=True, timeout=30)
            if version.returncode == 0:
                return copy, version.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
        if time.monotonic() > deadline:
            sys.exit(f"soak: {path} is missing or does not run; build it with `swift build -c release`")
        log(f"soak: waiting for {path} (being rebuilt?)")
        time.sleep(5)


# ---------------------------------------------------------------------------------------
# Servers, proxies, mounts.

class Server:
    """A test server from scripts/test-servers in its own DIR; stopped on cleanup."""

    def __init__(self, kind, folder):
        self.kind, self.dir, self.url = kind, folder, None
        CLEANUP.push(f"stop {kind}", self.stop)

    @property
    def root(self):
        return os.path.join(self.dir, "root")

    @property
    def access_log(self):
        return os.path.join(self.dir, "access.log")

    def start(self):
        result = subprocess.run(["bash", os.path.join(SERVERS, f"start-{self.kind}.sh"), self.dir],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"{self.kind} did not start: {result.stderr.strip()}")
        self.url = result.stdout.strip()
        return self.url

    def stop(self):
        subprocess.run(["bash", os.path.join(SERVERS, "stop.sh"), self.dir], timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def dav(self, folder, origin=None):
        origin = origin or self.url
        return "dav://" + origin[len("http://"):] + "/dav/" + quote(folder)

    def seed(self, folder, source):
        """Puts a tree on the server, owned by whoever writes DIR/root."""
        copy_tree(source, os.path.join(self.root, folder))
        owner = open(os.path.join(self.dir, "data-owner")).read().strip()
        subprocess.run(["chown", "-R", owner, os.path.join(self.root, folder)], check=True)

    def log_mark(self):
        return os.path.getsize(self.access_log) if os.path.exists(self.access_log) else 0

    def aborted_put_bytes(self, mark):
        """Request bytes of PUTs logged since mark that did not succeed: uploads cut off
        by a kill. Field 5 is the request's size on both servers (headers included)."""
        total = 0
        with open(self.access_log, "rb") as f:
            f.seek(mark)
            for line in f.read().decode("utf-8", "replace").splitlines():
                fields = line.split()
                if len(fields) >= 5 and fields[0] == "PUT" and not fields[2].startswith("2") and fields[4].isdigit():
                    total += int(fields[4])
        return total


class S3Store(Server):
    """SeaweedFS `weed mini` from start-s3.sh: the bucket `ferry`; the objects are not on
    this disk, so pairs look at them by pulling (Soak.s3_view)."""

    def start(self):
        result = subprocess.run(["bash", os.path.join(SERVERS, "start-s3.sh"), self.dir, "seaweedfs"],
                                capture_output=True, text=True, timeout=90)
        if result.returncode != 0:
            raise RuntimeError(f"weed mini did not start: {result.stderr.strip()}")
        self.url = result.stdout.strip()
        return self.url

    def log_mark(self):
        return 0

    def aborted_put_bytes(self, mark):
        return 0  # the store keeps no access log: bytes of cut-off uploads are not counted

    def unfinished_uploads(self, prefix):
        """Keys of the multipart uploads under prefix that were neither completed nor aborted."""
        listing = subprocess.run(
            ["curl", "-s", "--noproxy", "*", "--max-time", "10", "--aws-sigv4", "aws:amz:us-east-1:s3",
             "--user", f"{S3_KEY}:{S3_SECRET}", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
             f"{self.url}/{S3_BUCKET}?uploads=&prefix={quote(prefix)}"],
            capture_output=True, text=True, timeout=30).stdout
        return [part.split("</Key>")[0] for part in listing.split("<Key>")[1:]]


class FaultProxy:
    def __init__(self, upstream, share, seed, log_path):
        self.log_path = log_path
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(SERVERS, "fault-proxy.py"), upstream, str(share), str(seed),
             "--kinds", FAULT_KINDS, "--log", log_path],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        self.undo = CLEANUP.push(f"fault proxy pid {self.process.pid}", self.stop)
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            raise RuntimeError("the fault proxy did not start")

    def stop(self):
        kill_process(self.process)
        CLEANUP.remove(self.undo)

    def injected(self):
        """Count of injected faults per kind. A `cut` is the client's own (the WebDAV
        probe's PUT cut off half-way), passed on, not injected."""
        counts = {}
        with open(self.log_path) as f:
            for line in f:
                fields = line.split()  # METHOD RAW-PATH OUTCOME [STATUS]
                if len(fields) >= 3 and fields[2] not in ("ok", "cut"):
                    counts[fields[2]] = counts.get(fields[2], 0) + 1
        return counts


class Tmpfs:
    """A small tmpfs mounted at a folder, unmounted on cleanup."""

    @staticmethod
    def mount(folder, size):
        """(the mount, None) or (None, why it could not be mounted)."""
        if os.geteuid() != 0:
            return None, "not root"
        os.makedirs(folder, exist_ok=True)
        try:
            result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", folder],
                                    capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as error:
            return None, str(error)
        if result.returncode != 0:
            return None, result.stderr.strip() or f"mount exit {result.returncode}"
        mount = Tmpfs()
        mount.folder = folder
        mount.undo = CLEANUP.push(f"umount {folder}", mount.unmount)
        return mount, None

    def resize(self, size):
        subprocess.run(["mount", "-o", f"remount,size={size}", self.folder], check=True, timeout=30)

    def unmount(self):
        if subprocess.run(["umount", self.folder], capture_output=True, timeout=30).returncode != 0:
            subprocess.run(["umount", "-l", self.folder], capture_output=True, timeout=30)
        CLEANUP.remove(self.undo)


# ---------------------------------------------------------------------------------------
# Trial results and the table.

@dataclass
class Trial:
    kind: str                  # the table row
    label: str                 # which trial, with what it needs to be replayed
    seconds: float = 0.0
    problems: list = field(default_factory=list)   # why it failed (empty: passed)
    notes: list = field(default_factory=list)      # what was seen, pass or fail
    tags: list = field(default_factory=list)       # short outcomes, counted in the table
    counters: dict = field(default_factory=dict)   # numbers the table sums per row
    files_resent: int = 0
    bytes_resent: int = 0
    skipped: str = ""

    @property
    def passed(self):
        return not self.problems and not self.skipped

    def check(self, condition, problem):
        if not condition:
            self.problems.append(problem)
        return condition

    def report(self):
        state = f"skipped: {self.skipped}" if self.skipped else ("ok" if self.passed else "FAILED")
        details = "; ".join(self.notes + [f"PROBLEM {p}" for p in self.problems])
        log(f"  [{self.label}] {state} ({self.seconds:.1f} s) {details}")


def table(trials):
    rows = {}
    for trial in trials:
        rows.setdefault(trial.kind, []).append(trial)
    lines = ["| trial kind | trials | passed | files re-sent | bytes re-sent | time | notes |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for kind, group in rows.items():
        ran = [t for t in group if not t.skipped]
        skipped = sorted({t.skipped for t in group if t.skipped})
        notes = [f"skipped: {s}" for s in skipped] + row_notes(ran)
        lines.append(f"| {kind} | {len(ran)} | {sum(t.passed for t in ran)} | "
                     f"{sum(t.files_resent for t in ran)} | {human(sum(t.bytes_resent for t in ran))} | "
                     f"{sum(t.seconds for t in group):.0f} s | {'; '.join(notes)} |")
    return "\n".join(lines)


def row_notes(trials):
    """A table cell's notes: each distinct tag with how many trials had it, then the
    failed trials."""
    counts, sums = {}, {}
    for trial in trials:
        for tag in trial.tags:
            counts[tag] = counts.get(tag, 0) + 1
        for name, value in trial.counters.items():
            sums[name] = sums.get(name, 0) + value
    notes = [f"{name}: {value}" for name, value in sums.items()]
    notes += [tag if len(trials) == 1 else f"{tag} ×{n}" for tag, n in counts.items()]
    failed = [t.label.split(":")[0] for t in trials if not t.passed]
    return notes + ([f"FAILED: {', '.join(failed)}"] if failed else [])


# ---------------------------------------------------------------------------------------
# The soak: shared setup and one function per trial kind.

@dataclass
class Pair:
    """The two sides of a ferry run, as ferry sees them and as they lie on this disk."""
    direction: str              # push or pull
    source: str                 # the tree the run copies (on disk)
    target: str                 # where the copy lands (on disk)
    state: str                  # the run's --state folder
    command: object             # command(config=..., bwlimit=...) -> ferry arguments
    server: object = None       # the WebDAV server involved, if any
    refresh: object = None      # S3 push: fetches the remote into target (not on this disk)

    def size(self):
        return sum(os.path.getsize(p) for p in tree_files(self.source).values())

    def look(self):
        """Brings target up to date with the remote, where the remote is not on this disk."""
        if self.refresh:
            self.refresh()

    def differences(self):
        self.look()
        return compare_trees(self.source, self.target)

    def discard(self):
        remove(self.target), remove(self.state)


class Soak:
    def __init__(self, options, work, ferry):
        self.options, self.work, self.ferry = options, work, ferry
        self.trials = []
        self.data = os.path.join(work, "data")
        self.tree_size = make_tree(self.data, options.seed)
        self.one_file = os.path.join(work, "one-file")
        write_file(os.path.join(self.one_file, "DCIM", "Über den Wolken.mov"),
                   random.Random(f"one-file:{options.seed}").randbytes(5 * MiB))
        self.servers = {}
        self.s3_seeded = {}             # S3 folder -> the local tree it was seeded from
        self.counter = 0
        self.configs = {
            "plain": self.config("plain", "retry:\n  offline_wait: 2m\n"),
            "faults": self.config("faults", "retry:\n  attempts: 30\n  base_delay: 200ms\n  factor: 2\n"
                                            "  max_delay: 2s\n  offline_wait: 2m\n"),
        }

    # -- setup helpers

    def config(self, name, text):
        path = os.path.join(self.work, f"{name}.yml")
        with open(path, "w") as f:
            f.write("# written by scripts/soak.py\n" + text)
        return path

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}-{self.counter:03d}"

    def server(self, kind):
        if kind not in self.servers:
            folder = os.path.join(self.work, kind)
            server = S3Store(kind, folder) if kind == "s3" else Server(kind, folder)
            server.start()
            self.servers[kind] = server
            if kind == "s3":
                self.use_s3(server)
        return self.servers[kind]

    def use_s3(self, store):
        """The remote `s3soak` (small multipart parts, so the 6 MiB files go in parts and
        a kill can land between them) in the plain config, and the store's keys in ferry's
        environment, with the machine's own AWS settings left out."""
        with open(self.configs["plain"], "a") as f:
            f.write(f"remotes:\n  s3soak:\n    type: s3\n    bucket: {S3_BUCKET}\n    endpoint: {store.url}\n"
                    "    multipart_threshold: 5M\n    multipart_part_size: 5M\n    multipart_concurrency: 2\n")
        env = {k: v for k, v in self.ferry.env.items() if not k.startswith("AWS_")}
        env.update({"AWS_ACCESS_KEY_ID": S3_KEY, "AWS_SECRET_ACCESS_KEY": S3_SECRET, "AWS_REGION": "us-east-1",
                    "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"})
        self.ferry.env = env

    def s3_view(self, folder):
        """A fresh pull of the S3 folder into a local folder (with a state of its own), so
        the trial's checks compare files on this disk."""
        view = os.path.join(self.work, "s3-view", folder)
        state = os.path.join(self.work, "s3-view-state", folder)

        def refresh():
            remove(view), remove(state)
            os.makedirs(view)
            run = self.ferry.run(["pull", view, "--from", f"s3soak:{folder}", "--state", state,
                                  "--config", self.configs["plain"]])
            if run.returncode != 0:
                raise RuntimeError(f"pulling s3soak:{folder} to look at it failed: {run.describe()}")
        return view, refresh

    def remote(self, backend, folder, origin=None):
        """(what ferry is given, where the bytes are on this machine) for a remote folder;
        origin puts a proxy in front of the server. pullsrc holds the data tree."""
        if folder == "pullsrc":
            self.remote_tree(backend, folder, self.data)
        if backend == "local":
            path = os.path.join(self.work, "local-remote", folder)
            return path, path
        server = self.server(backend)
        if backend == "s3":
            # A seeded folder's bytes are on this disk where they came from.
            return f"s3soak:{folder}", self.s3_seeded.get(folder) or self.s3_view(folder)[0]
        return server.dav(folder, origin), os.path.join(server.root, folder)

    def remote_tree(self, backend, folder, source):
        """Puts a tree into a remote folder once, straight onto the disk."""
        if backend == "local":
            path = os.path.join(self.work, "local-remote", folder)
            if not os.path.isdir(path):
                copy_tree(source, path)
        elif backend == "s3":
            if folder not in self.s3_seeded:
                self.server(backend)
                self.push_seed(source, f"s3soak:{folder}", "s3-seed-state", folder)
                self.s3_seeded[folder] = source
        elif backend == "nginx":
            # Through ferry, not onto the disk: nginx leaves dot names out of its listings,
            # and a pull finds them in the catalog a push writes (without one a pull that
            # cannot see every file exits 1, docs/reliability.md).
            if not os.path.isdir(os.path.join(self.server(backend).root, folder)):
                self.push_seed(source, self.server(backend).dav(folder), "nginx-seed-state", folder)
        elif not os.path.isdir(os.path.join(self.server(backend).root, folder)):
            self.server(backend).seed(folder, source)

    def push_seed(self, source, remote, states, folder):
        """Puts a tree on a remote with a ferry push (its own state folder under `states`)."""
        run = self.ferry.run(["push", source, "--to", remote, "--state", os.path.join(self.work, states, folder),
                              "--config", self.configs["plain"]])
        if run.returncode != 0:
            raise RuntimeError(f"seeding {remote} failed: {run.describe()}")

    def pair(self, direction, backend, name, source=None, target=None, folder="pullsrc", origin=None):
        """push: source (default the data tree) to the remote folder `name` (or to the
        local path target); pull: the remote folder `folder` into target (default a fresh
        local folder). Every pair gets a fresh state folder."""
        state = os.path.join(self.work, "state", name)
        if direction == "push":
            source = source or self.data
            remote, target = (target, target) if target else self.remote(backend, name, origin)
            local = source
        else:
            remote, source = self.remote(backend, folder, origin)
            target = target or os.path.join(self.work, "pulled", name)
            local = target
        flag = "--to" if direction == "push" else "--from"
        refresh = self.s3_view(name)[1] if backend == "s3" and direction == "push" else None

        def command(config="plain", bwlimit=None):
            args = [direction, local, flag, remote, "--state", state, "--config", self.configs[config]]
            return args + (["--bwlimit", bwlimit] if bwlimit else [])
        return Pair(direction, source, target, state, command, self.servers.get(backend), refresh)

    def rng(self, kind):
        """A RNG per trial kind, so --only and --backends replay the same moments."""
        return random.Random(f"{self.options.seed}:{kind}")

    def record(self, trial, began):
        trial.seconds = time.monotonic() - began
        trial.report()
        self.trials.append(trial)
        return trial

    def check_clean_end(self, trial, run, pair, what):
        """The common end of every trial: exit 0, identical, no temporary file, sound journal."""
        trial.check(run.returncode == 0, f"{what}: {run.describe()}")
        differences = pair.differences()
        more = f" (+{len(differences) - 5} more)" if len(differences) > 5 else ""
        trial.check(not differences, f"not identical after {what}: {differences[:5]}{more}")
        left = temp_files(pair.target) if os.path.isdir(pair.target) else {}
        trial.check(not left, f"temporary files left after {what}: {sorted(left)[:5]}")
        doctor = self.ferry.doctor(pair.state)
        trial.check(doctor == 0, f"ferry doctor exit {doctor} after {what}")
        if isinstance(pair.server, S3Store) and pair.direction == "push":
            left = pair.server.unfinished_uploads(os.path.basename(pair.target) + "/")
            trial.check(not left, f"unfinished multipart uploads left after {what}: {left[:5]}")
        if any(name.startswith(SERVER_TEMP_PREFIX) for _, _, names in os.walk(pair.target) for name in names):
            trial.tags.append("Apache left a .davfs.tmp file")

    # -- 1 and 2: kill -9, then a clean run

    def kill_trials(self, direction, backend, count):
        kind = f"{direction} kill -9 / {backend}"
        rng = self.rng(f"kill-{direction}-{backend}")
        try:
            duration = self.calibrate(direction, backend)
        except RuntimeError as error:
            self.record(Trial(kind, f"{direction}/{backend} calibration", problems=[str(error)]), time.monotonic())
            return
        log(f"{kind}: an uninterrupted run takes {duration:.2f} s at --bwlimit {self.options.bwlimit}; "
            f"{count} trials, kill moments from seed {self.options.seed}")
        for number in range(1, count + 1):
            fraction = rng.random()
            self.kill_trial(kind, direction, backend, f"{number}/{count}", fraction, duration)

    def calibrate(self, direction, backend):
        """Seconds an uninterrupted run takes (checked identical, too)."""
        pair = self.pair(direction, backend, self.fresh(f"calibrate-{direction}"))
        run = self.ferry.run(pair.command(bwlimit=self.options.bwlimit))
        differences = pair.differences()
        pair.discard()
        if run.returncode != 0 or differences:
            raise RuntimeError(f"the uninterrupted {direction} that measures the duration failed: "
                               f"{run.describe()} {differences[:3]}")
        return run.seconds

    def kill_trial(self, kind, direction, backend, number, fraction, duration):
        began = time.monotonic()
        kill_at = fraction * duration
        trial = Trial(kind, f"{direction}/{backend} {number}: kill at {kill_at:.3f} s "
                            f"(u={fraction:.4f} of {duration:.2f} s)")
        pair = self.pair(direction, backend, self.fresh(direction))
        mark = pair.server.log_mark() if pair.server else 0
        killed = self.ferry.start(pair.command(bwlimit=self.options.bwlimit)).finish(kill_at, planned_kill=True)
        self.recover(trial, pair, killed, mark)
        self.record(trial, began)

    def last_byte_trials(self, direction):
        """One kill per backend at the worst moment: the partial file is complete, the
        rename has not happened yet. Not on S3, which has no partial file to watch: an
        object appears whole when its PUT or its multipart completion ends."""
        for backend in (b for b in self.options.backends if b != "s3"):
            began = time.monotonic()
            trial = Trial(f"{direction} kill -9 at the last byte / {backend}",
                          f"{direction}/{backend} last byte: kill when the partial file reaches full size")
            name = self.fresh(f"lastbyte-{direction}")
            if direction == "push":
                pair = self.pair("push", backend, name, source=self.one_file)
            else:
                self.remote_tree(backend, "onefile", self.one_file)
                pair = self.pair("pull", backend, name, folder="onefile")
            relative, size = next((p, os.path.getsize(a)) for p, a in tree_files(self.one_file).items())
            part = os.path.join(pair.target, os.path.dirname(relative), "." + os.path.basename(relative) + PART)
            mark = pair.server.log_mark() if pair.server else 0
            started = self.ferry.start(pair.command(bwlimit=self.options.last_byte_bwlimit))
            caught = wait_for_size(part, size, started.process, RUN_TIMEOUT)
            killed = started.finish(0, planned_kill=True)
            trial.tags.append("killed with the partial file complete" if caught and killed.killed
                              else "moment missed: the rename came first")
            self.recover(trial, pair, killed, mark)
            self.record(trial, began)

    def recover(self, trial, pair, killed, mark):
        """After a kill: nothing torn, the journal sound; then a clean run finishes the job
        without sending a completed file again. Counts what was sent twice."""
        direction = pair.direction
        done_before = killed.transferred()
        trial.notes.append(f"{len(done_before)} files done before the kill" if killed.killed
                           else f"finished before the kill ({killed.describe()})")
        if not killed.killed:
            trial.tags.append("run ended before its kill moment")
        pair.look()
        torn = torn_files(pair.source, pair.target)
        trial.check(not torn, f"torn or foreign files under their final name after the kill: {torn[:5]}")
        doctor = self.ferry.doctor(pair.state)
        trial.check(doctor == 0, f"ferry doctor exit {doctor} right after the kill")
        sent_before = landed_bytes(pair.target)
        if pair.server and direction == "push":
            sent_before += pair.server.aborted_put_bytes(mark)

        clean = self.ferry.run(pair.command())
        resent = sorted(done_before & clean.transferred())
        trial.files_resent = len(resent)
        trial.bytes_resent = sent_before + clean.sent_bytes() - pair.size()
        trial.check(not resent, f"completed files sent again by the clean {direction}: {resent[:5]}")
        resumed = clean.summary().get("resumed_bytes", 0)
        trial.notes.append(f"clean {direction}: {len(clean.transferred())} files, resumed {human(resumed)}")
        if resumed:
            trial.tags.append("a partial file resumed")
        self.check_clean_end(trial, clean, pair, f"the clean {direction}")
        if trial.passed:
            pair.discard()

    # -- 3: faults between ferry and the server

    def fault_trials(self, share, count):
        kind = f"faults {share:.0%} / nginx (push + pull)"
        server = self.server("nginx")
        for number in range(1, count + 1):
            began = time.monotonic()
            seed = self.options.seed * 1000 + int(share * 100) * 10 + number
            trial = Trial(kind, f"faults {share:.0%} {number}/{count}: proxy seed {seed}")
            name = self.fresh("faults")
            proxy = FaultProxy(server.url, share, seed, os.path.join(self.work, f"{name}.proxy.log"))
            try:
                push = self.pair("push", "nginx", name, origin=proxy.url)
                pushed = self.ferry.run(push.command(config="faults"), FAULT_RUN_TIMEOUT)
                self.check_clean_end(trial, pushed, push, "the push")
                pull = self.pair("pull", "nginx", name + "-pull", folder=name, origin=proxy.url)
                pulled = self.ferry.run(pull.command(config="faults"), FAULT_RUN_TIMEOUT)
                self.check_clean_end(trial, pulled, pull, "the pull")
            finally:
                proxy.stop()
            injected = proxy.injected()
            retries = len(pushed.of("retrying")) + len(pulled.of("retrying"))
            offline = len(pushed.of("remote_offline")) + len(pulled.of("remote_offline"))
            trial.notes.append(f"faults {dict(sorted(injected.items()))}, {retries} retries, {offline} offline "
                               f"spells, push {pushed.seconds:.0f} s, pull {pulled.seconds:.0f} s")
            trial.counters.update({"faults injected": sum(injected.values()), "retries": retries,
                                   "offline spells": offline})
            trial.tags.append(f"{len(injected)} fault kinds")
            if trial.passed:
                push.discard(), pull.discard()
            self.record(trial, began)

    # -- 4: the server goes away for a while in the middle of a push

    def outage_trial(self):
        began = time.monotonic()
        server = self.server("nginx")
        stop_at = self.rng("outage").uniform(2.0, 4.0)
        trial = Trial(f"server down {self.options.outage:.0f} s mid-push / nginx",
                      f"outage: server stopped at {stop_at:.2f} s for {self.options.outage:.0f} s")
        pair = self.pair("push", "nginx", self.fresh("outage"))
        started = self.ferry.start(pair.command(bwlimit=self.options.outage_bwlimit))
        time.sleep(stop_at)
        trial.check(started.process.poll() is None,
                    "the push ended before the server was stopped; lower --outage-bwlimit")
        url_before = server.url
        server.stop()
        time.sleep(self.options.outage)
        try:
            server.start()
            trial.check(server.url == url_before, f"the server came back on {server.url}, not {url_before}")
        except RuntimeError as error:
            trial.problems.append(f"restarting the server failed: {error}")
        run = started.finish(RUN_TIMEOUT)
        self.check_clean_end(trial, run, pair, "the push")
        offline, online = run.of("remote_offline"), run.of("remote_online")
        trial.tags.append(f"remote_offline ×{len(offline)}, remote_online ×{len(online)}")
        trial.check(offline and online, "no remote_offline/remote_online events during the outage")
        if online:
            trial.notes.append(f"offline for {online[-1].get('offline_seconds')} s")
        trial.notes.append(f"push took {run.seconds:.0f} s")
        if trial.passed:
            pair.discard()
        self.record(trial, began)

    # -- 5: a big file rewritten while it is being uploaded

    def rewrite_trials(self, backend):
        rng = self.rng(f"rewrite-{backend}")
        size = self.options.rewrite_mib * MiB
        for how in REWRITES:
            old, new = rng.randbytes(size), rng.randbytes(size if how != "by rename" else size - 8 * MiB)
            self.rewrite_trial(backend, how, old, new, rng.uniform(0.3, 0.7))

    def rewrite_trial(self, backend, how, old, new, fraction):
        began = time.monotonic()
        rewrite_at = fraction * len(old) / parse_rate(self.options.rewrite_bwlimit)
        trial = Trial(f"file rewritten during upload / {backend}",
                      f"rewrite {how}/{backend}: {len(old) // MiB} MiB, rewritten at {rewrite_at:.2f} s")
        name = self.fresh("rewrite")
        source = os.path.join(self.work, "rewrite-src", name)
        path = os.path.join(source, "Über den Wolken.mov")
        write_file(path, old)
        pair = self.pair("push", backend, name, source=source)
        final = os.path.join(pair.target, os.path.basename(path))
        watcher = FinalNameWatcher(final, {"old": old, "new": new})
        started = self.ferry.start(pair.command(bwlimit=self.options.rewrite_bwlimit))
        watcher.start()
        try:
            time.sleep(rewrite_at)
            rewrite(path, new, how)
            last = started.finish(RUN_TIMEOUT)
            trial.notes.append(f"first push: {last.describe()}")
            if os.path.exists(final) and same_bytes(path, final):
                trial.tags.append("new content in the same run")
            else:
                last = self.ferry.run(pair.command())
                trial.notes.append(f"second push: {last.describe()}")
                trial.tags.append("new content after one more push")
        finally:
            watcher.stop()
        trial.notes.append(f"target seen as: {watcher.describe()}")
        trial.check(not watcher.torn, f"torn file under the final name: {watcher.torn[:3]}")
        self.check_clean_end(trial, last, pair, "the last push")
        if trial.passed:
            pair.discard(), remove(source)
        self.record(trial, began)

    # -- 6: the target runs out of space

    def disk_full_trial(self, direction):
        began = time.monotonic()
        name = self.fresh(f"diskfull-{direction}")
        small, big = self.options.tmpfs_small, self.options.tmpfs_big
        trial = Trial(f"disk full ({small} tmpfs) / {direction}", f"disk full {direction}: tmpfs {small} then {big}")
        mount, refused = Tmpfs.mount(os.path.join(self.work, name), small)
        if mount is None:
            trial.skipped = "needs root for a tmpfs mount"
            trial.notes.append(f"mount: {refused}")
            return self.record(trial, began)
        try:
            target = os.path.join(mount.folder, "target")
            backend = "local" if direction == "push" else "nginx"
            pair = self.pair(direction, backend, name, target=target)
            full = self.ferry.run(pair.command())
            self.check_out_of_space(trial, full, pair)
            mount.resize(big)
            again = self.ferry.run(pair.command())
            trial.notes.append(f"after remount {big}: {again.describe()}")
            self.check_clean_end(trial, again, pair, f"the {direction} after the remount")
        finally:
            mount.unmount()
        remove(pair.state)
        self.record(trial, began)

    def check_out_of_space(self, trial, run, pair):
        failed = run.of("failed")
        trial.notes.append(f"full: {run.describe()}")
        trial.tags.append(f"full: exit {run.returncode}, {len(failed)} files failed")
        trial.check(run.returncode == 1, f"expected exit 1 on a full disk, got {run.describe()}")
        unclear = [f"{e.get('path')}: {e.get('error')}" for e in failed if "space" not in str(e.get("error")).lower()]
        trial.check(failed and not unclear, f"failures without a clear 'space' error: {unclear[:3] or 'none failed'}")
        missing = set(tree_files(pair.source)) - set(tree_files(pair.target))
        unreported = sorted(missing - {e.get("path") for e in failed})
        trial.check(not unreported, f"files neither written nor reported as failed: {unreported[:5]}")
        torn = torn_files(pair.source, pair.target)
        trial.check(not torn, f"partial files under their final name: {torn[:5]}")
        doctor = self.ferry.doctor(pair.state)
        trial.check(doctor == 0, f"ferry doctor exit {doctor} after the full disk")


class FinalNameWatcher:
    """Polls one target path while a run goes on and keeps a timeline of the versions
    seen under it ('old', 'new'); any other content there is a torn file."""

    def __init__(self, path, versions, interval=0.02, limit=RUN_TIMEOUT + 60):
        self.path, self.interval, self.limit = path, interval, limit
        self.versions = versions
        self.digests = {hashlib.sha256(content).digest(): label for label, content in versions.items()}
        self.timeline, self.torn = [], []
        self.last = None
        self.began = time.monotonic()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)

    @property
    def seen(self):
        return [label for _, label in self.timeline]

    def start(self):
        self.began = time.monotonic()
        self.thread.start()

    def stop(self):
        self.stopping.set()
        self.thread.join()
        self.look()  # the final state, after the run

    def poll(self):
        deadline = time.monotonic() + self.limit
        while not self.stopping.is_set() and time.monotonic() < deadline:
            self.look()
            self.stopping.wait(self.interval)

    def look(self):
        try:
            before = os.stat(self.path)
            if (before.st_ino, before.st_size, before.st_mtime_ns) == self.last:
                return
            with open(self.path, "rb") as f:
                content = f.read()
            after = os.stat(self.path)
        except FileNotFoundError:
            return
        if (after.st_ino, after.st_size, after.st_mtime_ns) != (before.st_ino, before.st_size, before.st_mtime_ns):
            return  # changed while being read: look again next time
        self.last = (before.st_ino, before.st_size, before.st_mtime_ns)
        at = time.monotonic() - self.began
        label = self.digests.get(hashlib.sha256(content).digest())
        if label is None:
            label = "TORN"
            self.torn.append(f"at {at:.2f} s: {len(content)} bytes, inode {before.st_ino}, "
                             f"{describe_mix(content, self.versions)}")
        if self.seen[-1:] != [label]:
            self.timeline.append((at, label))

    def describe(self):
        return " → ".join(f"{label} ({at:.2f} s)" for at, label in self.timeline) or "nothing"


def describe_mix(content, versions):
    """Which version each end of a torn file comes from, e.g. 'old up to byte 25165824,
    new after it'."""
    def common_prefix(a, b):
        low, high = 0, min(len(a), len(b))
        while low < high:  # binary search for the longest equal prefix
            middle = (low + high + 1) // 2
            if a[:middle] == b[:middle]:
                low = middle
            else:
                high = middle - 1
        return low
    parts = []
    for label, version in versions.items():
        prefix = common_prefix(content, version)
        suffix = common_prefix(content[::-1], version[::-1]) if len(content) == len(version) else 0
        parts.append(f"{label} for the first {prefix} and the last {suffix} bytes")
    return "matches " + ", ".join(parts)


REWRITES = ("in place", "truncated", "by rename")


def rewrite(path, content, how):
    """Gives a file new content, as programs do: in place (the same inode and size, the
    bytes overwritten from the start: only the mtime tells), truncated to 0 and written
    again (same inode), or by rename (a new file of another size renamed over it)."""
    if how == "by rename":
        temporary = path + ".new"
        write_file(temporary, content)
        os.replace(temporary, path)
        return
    with open(path, "r+b") as f:
        if how == "truncated":
            f.truncate(0)
        f.write(content)


def parse_rate(text):
    units = {"k": KiB, "m": MiB, "g": 1 << 30}
    return float(text[:-1]) * units[text[-1].lower()] if text[-1].lower() in units else float(text)


# ---------------------------------------------------------------------------------------

def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--trials", type=int, default=30,
                        help="kill -9 trials per direction on the local backend and on nginx (default 30)")
    parser.add_argument("--apache-trials", type=int, default=5,
                        help="kill -9 trials per direction on Apache (default 5; 0 to skip)")
    parser.add_argument("--s3-trials", type=int, default=5,
                        help="kill -9 trials per direction on S3, SeaweedFS weed mini (default 5; 0 to skip)")
    parser.add_argument("--fault-trials", type=int, default=3,
                        help="trials at each fault share, 10%% and 30%% (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the data and of every random moment (default 1)")
    parser.add_argument("--only", default=",".join(KINDS),
                        help=f"comma-separated trial kinds to run (default all: {','.join(KINDS)})")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="backends for the kill and rewrite trials (default local,nginx,apache,s3)")
    parser.add_argument("--bwlimit", default="8M", help="bandwidth limit of the runs that get killed (default 8M)")
    parser.add_argument("--last-byte-bwlimit", default="2M",
                        help="bandwidth limit of the last-byte kill trials (default 2M)")
    parser.add_argument("--outage", type=float, default=20, help="seconds the server stays down (default 20)")
    parser.add_argument("--outage-bwlimit", default="2M", help="bandwidth limit of the outage push (default 2M)")
    parser.add_argument("--rewrite-mib", type=int, default=48, help="size of the rewritten file (default 48)")
    parser.add_argument("--rewrite-bwlimit", default="12M", help="bandwidth limit while it is rewritten (default 12M)")
    parser.add_argument("--tmpfs-small", default="16m", help="size of the full tmpfs (default 16m)")
    parser.add_argument("--tmpfs-big", default="64m", help="size it is remounted with (default 64m)")
    parser.add_argument("--output", default=os.path.join(REPO, "bench-results", "soak.md"),
                        help="where the table goes (default bench-results/soak.md)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs of every run)")
    options = parser.parse_args()
    options.only = [k.strip() for k in options.only.split(",") if k.strip()]
    options.backends = [b.strip() for b in options.backends.split(",") if b.strip()]
    for value, allowed, flag in [(options.only, KINDS, "--only"), (options.backends, BACKENDS, "--backends")]:
        unknown = [v for v in value if v not in allowed]
        if unknown:
            parser.error(f"{flag}: unknown {unknown}; choose from {','.join(allowed)}")
    return options


def run_soak(soak, options):
    counts = {"local": options.trials, "nginx": options.trials, "apache": options.apache_trials, "s3": options.s3_trials}
    steps = []
    for direction in ("push", "pull"):
        if f"kill-{direction}" in options.only:
            steps += [(f"{direction} kill -9 / {backend}", soak.kill_trials, (direction, backend, counts[backend]))
                      for backend in options.backends if counts[backend] > 0]
    if "last-byte" in options.only:
        steps += [(f"{direction} kill -9 at the last byte", soak.last_byte_trials, (direction,))
                  for direction in ("push", "pull")]
    if "faults" in options.only:
        steps += [(f"faults {share:.0%}", soak.fault_trials, (share, options.fault_trials)) for share in (0.10, 0.30)]
    if "outage" in options.only:
        steps.append(("server down mid-push", soak.outage_trial, ()))
    if "rewrite" in options.only:
        steps += [(f"file rewritten during upload / {backend}", soak.rewrite_trials, (backend,))
                  for backend in options.backends if backend in ("local", "nginx")]
    if "disk-full" in options.only:
        steps += [(f"disk full / {direction}", soak.disk_full_trial, (direction,)) for direction in ("pull", "push")]
    for kind, step, arguments in steps:
        try:
            step(*arguments)
        except RuntimeError as error:  # a server or the proxy did not start: this step fails, the rest goes on
            soak.record(Trial(kind, f"{kind}: setup", problems=[str(error)]), time.monotonic())


def write_report(soak, options, version, began):
    title = (f"Ferry soak, {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()} "
             f"({os.cpu_count()} cores, {platform.system()} {platform.release()}), {version}; "
             f"`--seed {options.seed} --trials {options.trials} --apache-trials {options.apache_trials} "
             f"--s3-trials {options.s3_trials} "
             f"--fault-trials {options.fault_trials}`; data: {human(soak.tree_size)} in "
             f"{len(tree_files(soak.data))} files; total {time.monotonic() - began:.0f} s.")
    failures = [t for t in soak.trials if not t.passed and not t.skipped]
    lines = [title, "", table(soak.trials)]
    if failures:
        lines += ["", "Failed trials:", ""]
        lines += [f"- {t.label}: " + "; ".join(t.problems + t.notes) for t in failures]
    text = "\n".join(lines)
    os.makedirs(os.path.dirname(os.path.abspath(options.output)), exist_ok=True)
    with open(options.output, "w") as f:
        f.write(text + "\n")
    print(text)
    return failures


def main():
    options = parse_arguments()
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started with SIGINT ignored (`cmd &`)
    signal.signal(signal.SIGTERM, on_sigterm)
    binary = os.environ.get("FERRY_BIN", ".build/release/ferry")
    binary = binary if os.path.isabs(binary) else os.path.join(REPO, binary)
    work = tempfile.mkdtemp(prefix="ferry-soak-", dir="/tmp")
    os.chmod(work, 0o755)  # Apache's workers (nobody) must reach DIR/root
    began = time.monotonic()
    try:
        ferry, version = snapshot_binary(binary, work)
        log(f"soak: {version}, work folder {work}, seed {options.seed}")
        soak = Soak(options, work, Ferry(ferry, work))
        log(f"soak: data {human(soak.tree_size)} in {len(tree_files(soak.data))} files")
        try:
            run_soak(soak, options)
        finally:
            CLEANUP.run_all()
        failures = write_report(soak, options, version, began)
    except KeyboardInterrupt:
        log("soak: interrupted; cleaning up")
        return 130
    finally:
        CLEANUP.run_all()
        if options.keep:
            log(f"soak: kept {work}")
        else:
            remove(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
