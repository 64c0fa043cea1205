#!/usr/bin/env python3
"""WebDAV benchmark: ferry against rclone and against curl (the protocol's limit) on the
same nginx WebDAV server, same data, same parallelism (4), medians of 5 runs (BENCH_RUNS).

Cases: 2,000 files of 4 KiB pushed; one 1 GiB file pushed and pulled back; a second
push with nothing changed. With `encrypted` among the cases (the default), the two pushes
also run to a remote with `encryption:` (docs/encryption.md): "ferry encrypted ÷ ferry"
is encryption's overhead. `delay10` (also a default) pushes 600 files of 4 KiB through
delay-proxy.py holding every answer 10 ms (a LAN-to-internet round trip), to new names and
over files already there (the case that goes in one PUT per file); `delay50` holds them
50 ms, `small600` not at all (no proxy); `delay10apache`, `delay50apache` and
`small600apache` do the same against Apache, whose PUT creates no folders: there the three folders are made on
disk before every tool's run, and ferry also keeps each file's time (a PROPPATCH), which
curl and rclone do not. `bigdelay10` and `bigdelay50` push and pull the 1 GiB file
through the proxy. Every run's time and
peak memory (GNU time's, see bench_process.measured, via bench_rounds) are kept: the table gives the median, the spread and the
largest peak. Writes a Markdown table to stdout and bench-results/webdav.md.
"""
import contextlib, os, shutil, subprocess, sys, tempfile, time, platform

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_rounds  # noqa: E402
from bench_table import write_table  # noqa: E402

FERRY = os.path.abspath(os.environ.get("FERRY_BIN", ".build/release/ferry"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
# BENCH_CASES=small,push,pull,noop,noop20k,encrypted runs only those cases (default: all).
CASES = set((os.environ.get("BENCH_CASES") or "small,push,pull,noop,noop20k,encrypted,delay10").split(","))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-servers")
counter = [0]


def fresh_name(prefix):
    counter[0] += 1
    return f"{prefix}{counter[0]}"


def run(command, env=None):
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})})


def compare(tools):
    return bench_rounds.compare(tools, RUNS)


def main():
    for tool in ("rclone", "curl"):
        if shutil.which(tool) is None:
            sys.exit(f"bench: {tool} is not installed (run: bash scripts/bootstrap.sh bench)")
    work = tempfile.mkdtemp(prefix="ferry-davbench-")
    os.chmod(work, 0o755)
    server = os.path.join(work, "nginx")
    origin = subprocess.run(["bash", os.path.join(SCRIPTS, "start-nginx.sh"), server],
                            check=True, capture_output=True, text=True).stdout.strip()
    host = origin[len("http://"):]
    rows = []
    try:
        small = os.path.join(work, "small")
        for i in range(2000):
            folder = os.path.join(small, f"d{i // 200:02d}")
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"IMG_{i:05d}.jpg"), "wb") as f:
                f.write(os.urandom(4096))
        big = os.path.join(work, "big")
        os.makedirs(big)
        chunk = os.urandom(1 << 20)
        with open(os.path.join(big, "VID_0001.mp4"), "wb") as f:
            for _ in range(1024):
                f.write(chunk)
        state = os.path.join(work, "state")

        def ferry_push(src):
            def make():
                shutil.rmtree(state, ignore_errors=True)
                return [FERRY, "push", src, "--to", f"dav://{host}/dav/{fresh_name('f')}", "--state", state,
                        "--transfers", "4"], None
            return make

        key = os.path.join(work, "bench.key")
        run([FERRY, "keygen", key])

        def ferry_encrypted_push(src):
            def make():
                shutil.rmtree(state, ignore_errors=True)
                config = os.path.join(work, fresh_name("encrypted") + ".yml")
                with open(config, "w") as f:
                    f.write(f"remotes:\n  vault:\n    type: webdav\n    url: {origin}/dav/{fresh_name('e')}\n"
                            f"    encryption:\n      key_file: {key}\n")
                return [FERRY, "push", src, "--to", "vault", "--config", config, "--state", state, "--transfers", "4"], None
            return make

        def encrypted(src):
            return {"ferry encrypted": ferry_encrypted_push(src)} if "encrypted" in CASES else {}

        def rclone_copy(src):
            def make():
                return ["rclone", "copy", "--transfers", "4", src, f":webdav:{fresh_name('r')}"], \
                       {"RCLONE_WEBDAV_URL": f"{origin}/dav/", "RCLONE_WEBDAV_VENDOR": "other"}
            return make

        def curl_parallel(src):
            def make():
                target = fresh_name("c")
                config = os.path.join(work, target + ".curl")
                with open(config, "w") as f:
                    for root, _, names in os.walk(src):
                        for name in names:
                            rel = os.path.relpath(os.path.join(root, name), src)
                            f.write(f'upload-file = "{os.path.join(root, name)}"\n')
                            f.write(f'url = "{origin}/dav/{target}/{rel}"\n')
                return ["curl", "-s", "-S", "--fail", "-Z", "--parallel-max", "4", "-K", config], None
            return make

        os.sync()
        if "small" in CASES: rows.append(("2,000 × 4 KiB push", compare({
            "ferry": ferry_push(small),
            "rclone copy": rclone_copy(small),
            "curl -Z (plain PUT)": curl_parallel(small),
            **encrypted(small),
        })))
        # Each 1 GiB upload is removed before the next run, as the pulls remove what they
        # fetched: kept, nginx's copies filled the page cache, and past about 6 GiB every
        # tool's push took 3.7-3.9 s instead of 1.0-1.6 (the kernel finding pages it had
        # not used lately), so a tool's median depended on its place in the rotation.
        dav_root = os.path.join(server, "root")
        before_push = set(os.listdir(dav_root))

        def clear_pushed():
            for name in set(os.listdir(dav_root)) - before_push:
                shutil.rmtree(os.path.join(dav_root, name), ignore_errors=True)

        if "push" in CASES: rows.append(("1 GiB push", compare({
            "ferry": (ferry_push(big), clear_pushed),
            "rclone copy": (rclone_copy(big), clear_pushed),
            "curl -T": (lambda: (["curl", "-s", "-T", os.path.join(big, "VID_0001.mp4"),
                                  f"{origin}/dav/{fresh_name('t')}/VID_0001.mp4"], None), clear_pushed),
            **{name: (make, clear_pushed) for name, make in encrypted(big).items()},
        })))

        # Pull the 1 GiB file back from a copy pushed first.
        restored = os.path.join(work, "restored")

        def clear_restored():
            shutil.rmtree(restored, ignore_errors=True)
            shutil.rmtree(state, ignore_errors=True)

        encrypted_source = os.path.join(work, "encrypted-pull.yml")
        with open(encrypted_source, "w") as f:
            f.write(f"remotes:\n  vault:\n    type: webdav\n    url: {origin}/dav/pullenc\n"
                    f"    encryption:\n      key_file: {key}\n")
        if "pull" in CASES:
            shutil.rmtree(state, ignore_errors=True)
            run([FERRY, "push", big, "--to", f"dav://{host}/dav/pullsrc", "--state", state])
            if "encrypted" in CASES:
                shutil.rmtree(state, ignore_errors=True)
                run([FERRY, "push", big, "--to", "vault", "--config", encrypted_source, "--state", state])
        # The encrypted pull reads the file 4 MiB windows at a time and checks each
        # (docs/encryption.md); "ferry encrypted ÷ ferry" is what that costs.
        encrypted_pull = {"ferry encrypted": (lambda: ([FERRY, "pull", restored, "--from", "vault", "--config", encrypted_source,
                                                        "--state", state], None), clear_restored)} \
            if "encrypted" in CASES else {}
        # The same pull with the download in one stream (download_streams: 1), for what
        # the ranged streams bring.
        one_stream = os.path.join(work, "one-stream.yml")
        with open(one_stream, "w") as f:
            f.write(f"remotes:\n  dav:\n    type: webdav\n    url: {origin}/dav/pullsrc\n    download_streams: 1\n"
                    f"folders:\n  restored:\n    path: {restored}\n    remote: dav\n")
        # curl's equivalent of 4 streams: four ranged GETs at once, each to its own file.
        quarter = 1 << 28
        ranges = os.path.join(work, "ranges.curl")
        with open(ranges, "w") as f:
            for part in range(4):
                f.write(f'url = "{origin}/dav/pullsrc/VID_0001.mp4"\nrange = {part * quarter}-{(part + 1) * quarter - 1}\n'
                        f'output = "{os.path.join(work, f"part{part}.bin")}"\n')
        if "pull" in CASES: rows.append(("1 GiB pull", compare({
            "ferry": (lambda: ([FERRY, "pull", restored, "--from", f"dav://{host}/dav/pullsrc", "--state", state], None),
                      clear_restored),
            "ferry, 1 stream": (lambda: ([FERRY, "pull", "restored", "--config", one_stream, "--state", state], None),
                                clear_restored),
            "rclone copy": (lambda: (["rclone", "copy", ":webdav:pullsrc", restored],
                                     {"RCLONE_WEBDAV_URL": f"{origin}/dav/", "RCLONE_WEBDAV_VENDOR": "other"}),
                            clear_restored),
            "curl -o": lambda: (["curl", "-s", "-o", os.path.join(work, "pulled.bin"),
                                 f"{origin}/dav/pullsrc/VID_0001.mp4"], None),
            "curl -Z, 4 ranges": lambda: (["curl", "-s", "-Z", "--parallel-max", "4", "-K", ranges], None),
            **encrypted_pull,
        })))

        # The 600-file case without a proxy, and held 10 or 50 ms, on nginx and Apache.
        for case, delay in (("small600", 0), ("delay10", 0.01), ("delay50", 0.05)):
            if case in CASES:
                rows += delayed_small_files(work, server, origin, delay=delay)
        apache_delays = [delay for case, delay in (("small600apache", 0), ("delay10apache", 0.01), ("delay50apache", 0.05))
                         if case in CASES]
        if apache_delays:
            apache = os.path.join(work, "apache")
            apache_origin = subprocess.run(["bash", os.path.join(SCRIPTS, "start-apache.sh"), apache],
                                           check=True, capture_output=True, text=True).stdout.strip()
            try:
                for delay in apache_delays:
                    rows += delayed_small_files(work, apache, apache_origin, kind="Apache", delay=delay)
            finally:
                subprocess.run(["bash", os.path.join(SCRIPTS, "stop.sh"), apache], capture_output=True)
        for case, delay in (("bigdelay10", 0.01), ("bigdelay50", 0.05)):
            if case in CASES:
                rows += delayed_big_file(work, big, origin, delay, clear_pushed, restored, state)

        # No-op: everything already on the server.
        if "noop" in CASES:
            shutil.rmtree(state, ignore_errors=True)
            run([FERRY, "push", small, "--to", f"dav://{host}/dav/noop", "--state", state, "--transfers", "4"])
            before = sum(1 for _ in open(os.path.join(server, "access.log")))
            noop_ferry = compare({"ferry": lambda: ([FERRY, "push", small, "--to", f"dav://{host}/dav/noop", "--state", state], None)})["ferry"]
            after = sum(1 for _ in open(os.path.join(server, "access.log")))
            run(["rclone", "copy", "--transfers", "4", small, ":webdav:noop"],
                {"RCLONE_WEBDAV_URL": f"{origin}/dav/", "RCLONE_WEBDAV_VENDOR": "other"})
            rows.append((f"no-op push, 2,000 files ({(after - before) // RUNS} requests per ferry run)", {
                "ferry": noop_ferry,
                "rclone copy": compare({"rclone": lambda: (["rclone", "copy", "--transfers", "4", small, ":webdav:noop"],
                                                           {"RCLONE_WEBDAV_URL": f"{origin}/dav/", "RCLONE_WEBDAV_VENDOR": "other"})})["rclone"],
            }))

        # No-op at scale: 20,000 files in 200 folders (issue 13). ferry knows the remote from
        # its journal between listings (docs/remote-check.md), and is also timed with
        # --full (a PROPFIND per folder). rclone compares the same remote folder by size
        # only (its cheapest comparison; its own first copy of 20,000 files would take
        # ten minutes here).
        if "noop20k" in CASES:
            tree = os.path.join(work, "tree20k")
            for index in range(20_000):
                folder = os.path.join(tree, f"d{index // 100:03d}")
                if index % 100 == 0:
                    os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, f"IMG_{index:05d}.jpg"), "wb") as f:
                    f.write(b"x" * (1 + index % 64))
            shutil.rmtree(state, ignore_errors=True)
            target = f"dav://{host}/dav/noop20k"
            run([FERRY, "push", tree, "--to", target, "--state", state, "--transfers", "4"])
            rclone_env = {"RCLONE_WEBDAV_URL": f"{origin}/dav/", "RCLONE_WEBDAV_VENDOR": "other"}
            rclone_noop = ["rclone", "copy", "--size-only", "--transfers", "4", tree, ":webdav:noop20k"]

            def counted(command, env=None):
                before = sum(1 for _ in open(os.path.join(server, "access.log")))
                seconds = compare({"tool": lambda: (command, env)})["tool"]
                requests = (sum(1 for _ in open(os.path.join(server, "access.log"))) - before) // RUNS
                return seconds, requests

            ferry_seconds, ferry_requests = counted([FERRY, "push", tree, "--to", target, "--state", state])
            full_seconds, full_requests = counted([FERRY, "push", tree, "--to", target, "--state", state, "--full"])
            rclone_seconds, rclone_requests = counted(rclone_noop, rclone_env)
            rows.append((f"no-op push, 20,000 files in 200 folders (requests per run: ferry {ferry_requests}, "
                         f"ferry --full {full_requests}, rclone {rclone_requests})", {
                "ferry": ferry_seconds,
                "ferry --full": full_seconds,
                "rclone copy --size-only": rclone_seconds,
            }))
    finally:
        subprocess.run(["bash", os.path.join(SCRIPTS, "stop.sh"), server])
        shutil.rmtree(work, ignore_errors=True)
    finish(rows)


@contextlib.contextmanager
def delayed_origin(work, origin, delay):
    """The origin to use for `delay` seconds per answer: `origin` itself for 0, else a
    delay-proxy.py in front of it for as long as the block runs."""
    if delay == 0:
        yield origin
        return
    proxy_dir = os.path.join(work, fresh_name("proxy"))
    os.makedirs(proxy_dir)
    url_file = os.path.join(proxy_dir, "url")
    with open(url_file, "w") as out:
        proxy = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "delay-proxy.py"), origin, str(delay)],
                                 stdout=out, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if open(url_file).read().endswith("\n"):
                break
            time.sleep(0.05)
        yield open(url_file).read().strip()
    finally:
        proxy.terminate()
        proxy.wait()


def answer_delay(delay):
    return "no delay" if delay == 0 else f"{delay * 1000:.0f} ms per answer"


def delayed_small_files(work, server, origin, kind="nginx", delay=0.01):
    """600 × 4 KiB to `kind` (nginx or Apache) with every answer held `delay` seconds
    (delayed_origin), 4 at a time:
    once to new names (ferry: PUT to a temporary name + MOVE, for the Overwrite: F that
    guards a new name), once over the same names already on the server with other content
    (ferry: one PUT per file where the probe found the server's PUT atomic). Every tool
    starts from the same remote state and ferry from an empty journal, so ferry and rclone
    list the remote's folders first; curl just sends. To new names, ferry also runs from a
    state folder that pushed to the remote before (the server's probe remembered)."""
    with delayed_origin(work, origin, delay) as delayed:
        delayed_host = delayed[len("http://"):]
        state = os.path.join(work, fresh_name("delay-state-" + kind))
        trees = {}
        for version in ("old", "new"):
            tree = os.path.join(work, fresh_name(f"six-hundred-{version}-{kind}"))
            for i in range(600):
                folder = os.path.join(tree, f"d{i // 200}")
                os.makedirs(folder, exist_ok=True)
                path = os.path.join(folder, f"IMG_{i:04d}.jpg")
                # The older copies are shorter: rclone compares sizes only on this server.
                with open(path, "wb") as f:
                    f.write(os.urandom(4000 if version == "old" else 4096))
                stamp = 1_700_000_000 + i + (0 if version == "old" else 100_000)
                os.utime(path, (stamp, stamp))
            trees[version] = tree
        dav_root = os.path.join(server, "root")

        def target(replacing):
            """A fresh remote folder; with `replacing`, holding the old version of every file."""
            name = fresh_name("delay")
            folder = os.path.join(dav_root, name)
            if replacing:
                shutil.copytree(trees["old"], folder)
            elif kind == "Apache":
                # Apache's PUT makes no folders: curl needs them there, so every tool gets them.
                for i in range(3):
                    os.makedirs(os.path.join(folder, f"d{i}"))
            if kind == "Apache" and os.geteuid() == 0:
                # Apache's workers run as nobody (start-apache.sh), and write here.
                subprocess.run(["chown", "-R", "nobody:nogroup", folder], check=True)
            return name

        # Replacing every file of a folder is held as a likely mistake unless accepted.
        def accepting(replacing):
            return ["--accept-changes"] if replacing else []

        def ferry(src, replacing):
            def make():
                shutil.rmtree(state, ignore_errors=True)
                return [FERRY, "push", src, "--to", f"dav://{delayed_host}/dav/{target(replacing)}", "--state", state,
                        "--transfers", "4"] + accepting(replacing), None
            return make

        primer = os.path.join(work, fresh_name(f"primer-{kind}"))
        os.makedirs(os.path.join(primer, "earlier"))
        with open(os.path.join(primer, "earlier", "IMG_0000.jpg"), "wb") as f:
            f.write(os.urandom(4096))

        def ferry_known_server(src):
            """The everyday push: new files into a remote folder this state folder pushed to
            before (an untimed push of one file from another folder), so what the probe found
            is remembered (docs/webdav-servers.md) and the server is not probed again."""
            def make():
                shutil.rmtree(state, ignore_errors=True)
                remote = f"dav://{delayed_host}/dav/{target(False)}"
                run([FERRY, "push", primer, "--to", remote, "--state", state, "--transfers", "4"])
                return [FERRY, "push", src, "--to", remote, "--state", state, "--transfers", "4"], None
            return make

        def ferry_temporary_names(src, replacing):
            """As before direct PUT: every file to a temporary name, then MOVE."""
            def make():
                shutil.rmtree(state, ignore_errors=True)
                config = os.path.join(work, fresh_name("direct-put-off") + ".yml")
                with open(config, "w") as f:
                    f.write(f"remotes:\n  nas:\n    type: webdav\n    url: {delayed}/dav/{target(replacing)}\n"
                            f"    direct_put: off\n")
                return [FERRY, "push", src, "--to", "nas", "--config", config, "--state", state,
                        "--transfers", "4"] + accepting(replacing), None
            return make

        def rclone(src, replacing):
            def make():
                return ["rclone", "copy", "--transfers", "4", src, f":webdav:{target(replacing)}"], \
                       {"RCLONE_WEBDAV_URL": f"{delayed}/dav/", "RCLONE_WEBDAV_VENDOR": "other"}
            return make

        def curl(src, replacing):
            def make():
                name = target(replacing)
                config = os.path.join(work, name + ".curl")
                with open(config, "w") as f:
                    # curl 7.88 asks for `100 Continue` before every PUT body, a round trip
                    # more per file; ferry leaves it out below 1 MiB, and so does curl here.
                    f.write('header = "Expect:"\n')
                    # curl makes no folders: they come with the files (nginx's create_full_put_path).
                    for root, _, names in os.walk(src):
                        for file in names:
                            rel = os.path.relpath(os.path.join(root, file), src)
                            f.write(f'upload-file = "{os.path.join(root, file)}"\n')
                            f.write(f'url = "{delayed}/dav/{name}/{rel}"\n')
                return ["curl", "-s", "-S", "--fail", "-Z", "--parallel-max", "4", "-K", config], None
            return make

        rows = []
        for label, replacing in ((f"600 × 4 KiB push to {kind}, new names, {answer_delay(delay)}", False),
                                 (f"600 × 4 KiB push to {kind} over older copies, {answer_delay(delay)}", True)):
            known = {} if replacing else {"ferry, server known (state of an earlier push)": ferry_known_server(trees["new"])}
            rows.append((label, compare({
                "ferry": ferry(trees["new"], replacing),
                **known,
                "ferry, direct_put: off": ferry_temporary_names(trees["new"], replacing),
                "curl -Z --parallel-max 4 (plain PUT, no Expect)": curl(trees["new"], replacing),
                "rclone copy --transfers 4": rclone(trees["new"], replacing),
            })))
        return rows


def delayed_big_file(work, big, origin, delay, clear_pushed, restored, state):
    """The 1 GiB file pushed and pulled back with every answer held `delay` seconds: what a
    window of round trips costs each tool's stream (ferry pulls in 4 ranged streams, so
    curl does too, as in the pull without delay)."""
    with delayed_origin(work, origin, delay) as delayed:
        host = delayed[len("http://"):]
        rclone_env = {"RCLONE_WEBDAV_URL": f"{delayed}/dav/", "RCLONE_WEBDAV_VENDOR": "other"}
        source = fresh_name("bigdelay")

        def ferry_push():
            shutil.rmtree(state, ignore_errors=True)
            return [FERRY, "push", big, "--to", f"dav://{host}/dav/{fresh_name('fd')}", "--state", state], None

        rows = [(f"1 GiB push, {answer_delay(delay)}", compare({
            "ferry": (ferry_push, clear_pushed),
            "rclone copy": (lambda: (["rclone", "copy", big, f":webdav:{fresh_name('rd')}"], rclone_env), clear_pushed),
            "curl -T": (lambda: (["curl", "-s", "-S", "--fail", "-T", os.path.join(big, "VID_0001.mp4"),
                                  f"{delayed}/dav/{fresh_name('td')}/VID_0001.mp4"], None), clear_pushed),
        }))]
        shutil.rmtree(state, ignore_errors=True)
        run([FERRY, "push", big, "--to", f"dav://{host}/dav/{source}", "--state", state])

        def clear_restored():
            shutil.rmtree(restored, ignore_errors=True)
            shutil.rmtree(state, ignore_errors=True)

        quarter = 1 << 28
        ranges = os.path.join(work, fresh_name("ranges") + ".curl")
        with open(ranges, "w") as f:
            for part in range(4):
                f.write(f'url = "{delayed}/dav/{source}/VID_0001.mp4"\nrange = {part * quarter}-{(part + 1) * quarter - 1}\n'
                        f'output = "{os.path.join(work, f"part{part}.bin")}"\n')
        rows.append((f"1 GiB pull, {answer_delay(delay)}", compare({
            "ferry": (lambda: ([FERRY, "pull", restored, "--from", f"dav://{host}/dav/{source}", "--state", state], None),
                      clear_restored),
            "rclone copy": (lambda: (["rclone", "copy", f":webdav:{source}", restored], rclone_env), clear_restored),
            "curl -o": lambda: (["curl", "-s", "-S", "--fail", "-o", os.path.join(work, "pulled.bin"),
                                 f"{delayed}/dav/{source}/VID_0001.mp4"], None),
            "curl -Z, 4 ranges": lambda: (["curl", "-s", "-S", "--fail", "-Z", "--parallel-max", "4", "-K", ranges], None),
        })))
        return rows


def finish(rows):
    write_table(
        f"WebDAV benchmark against nginx on 127.0.0.1, 4 transfers, medians of {RUNS} runs "
        f"({platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}). "
        "Ratio = the tool's time / ferry's (above 1: ferry is faster). curl is the protocol's limit: "
        "plain PUTs, no temporary name, no MOVE, no journal.",
        rows, "webdav.md")

if __name__ == "__main__":
    main()
