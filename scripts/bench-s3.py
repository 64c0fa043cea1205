#!/usr/bin/env python3
"""S3 benchmark: ferry against rclone and curl (signed, parallel: the protocol's limit) on
the same SeaweedFS `weed mini` store, same data, same parallelism (4 transfers; Ferry's
queue caps count only files of 1 MiB or more, so its small files use all 4), medians of 5
rounds (BENCH_RUNS) with their spread and peak memory (bench_rounds).

Cases: 2,000 files of 4 KiB pushed; one 1 GiB file pushed and pulled back; a second push
with nothing changed; `delay10` and `delay50` (not in the default set): 600 files of
4 KiB pushed through test-servers/delay-proxy.py holding every answer 10 or 50 ms (a
LAN-to-internet and a long-distance round trip). Writes a Markdown table to stdout and
bench-results/s3.md.
"""
import os, shutil, subprocess, sys, tempfile, time, platform

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_rounds  # noqa: E402
from bench_table import write_table  # noqa: E402

FERRY = os.path.abspath(os.environ.get("FERRY_BIN", ".build/release/ferry"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
# BENCH_CASES=small,push,pull,noop runs only those cases (default: all).
CASES = set((os.environ.get("BENCH_CASES") or "small,push,pull,noop").split(","))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-servers")
KEY, SECRET, BUCKET = "ferry-test-key", "ferry-test-secret", "ferry"
counter = [0]

# These machines set AWS_CA_BUNDLE, with which rclone refuses plain-http endpoints: every
# tool gets the same clean AWS environment.
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and not k.startswith("RCLONE_")}


def fresh_name(prefix):
    counter[0] += 1
    return f"{prefix}{counter[0]}"


def run(command, env=None):
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**BASE_ENV, **(env or {})})


def compare(tools):
    return bench_rounds.compare(tools, RUNS, base_env=BASE_ENV)


class DelayProxy:
    """test-servers/delay-proxy.py in front of `origin`, every answer held `seconds`; the
    proxy's origin while in the `with` block. A relay of bytes: the Host a tool signs is the
    one the store sees."""

    def __init__(self, origin, seconds, work):
        self.origin, self.seconds = origin, seconds
        self.url_file = os.path.join(work, f"delay-proxy-{seconds}.url")

    def __enter__(self):
        with open(self.url_file, "w") as out:
            self.process = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "delay-proxy.py"), self.origin,
                                             str(self.seconds)], stdout=out, stderr=subprocess.DEVNULL)
        for _ in range(200):
            text = open(self.url_file).read()
            if text.endswith("\n"):
                return text.strip()
            time.sleep(0.05)
        self.process.kill()
        sys.exit("bench: the delay proxy did not start")

    def __exit__(self, *_):
        self.process.terminate()
        self.process.wait()


def main():
    for tool in ("rclone", "curl", "weed"):
        if shutil.which(tool) is None:
            sys.exit(f"bench: {tool} is not installed (run: bash scripts/bootstrap.sh bench, and test for weed)")
    work = tempfile.mkdtemp(prefix="ferry-s3bench-")
    server = os.path.join(work, "weed")
    endpoint = subprocess.run(["bash", os.path.join(SCRIPTS, "start-s3.sh"), server, "seaweedfs"],
                              check=True, capture_output=True, text=True).stdout.strip()
    ferry_env = {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "us-east-1",
                 "AWS_ENDPOINT_URL_S3": endpoint}
    rclone_env = {"RCLONE_S3_PROVIDER": "Other", "RCLONE_S3_ACCESS_KEY_ID": KEY, "RCLONE_S3_SECRET_ACCESS_KEY": SECRET,
                  "RCLONE_S3_ENDPOINT": endpoint, "RCLONE_S3_REGION": "us-east-1", "RCLONE_CONFIG": "/dev/null"}
    signed = ["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{KEY}:{SECRET}", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
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

        def ferry_push(src, through=endpoint):
            def make():
                shutil.rmtree(state, ignore_errors=True)
                return [FERRY, "push", src, "--to", f"s3://{BUCKET}/{fresh_name('f')}", "--state", state, "--transfers", "4"], \
                       {**ferry_env, "AWS_ENDPOINT_URL_S3": through}
            return make

        def rclone_copy(src, through=endpoint):
            def make():
                return ["rclone", "copy", "--transfers", "4", src, f":s3:{BUCKET}/{fresh_name('r')}"], \
                       {**rclone_env, "RCLONE_S3_ENDPOINT": through}
            return make

        def curl_parallel(src, through=endpoint):
            def make():
                target = fresh_name("c")
                config = os.path.join(work, target + ".curl")
                files = [os.path.join(root, name) for root, _, names in os.walk(src) for name in names]
                with open(config, "w") as f:
                    # One PUT per file, signed, in one round trip, as ferry sends it: the body
                    # goes by libcurl's POST path with the PUT method (`data-binary` and
                    # `request`), which adds no `Expect: 100-continue` below 1 MiB. A PUT
                    # by `upload-file` waits for `100 Continue` (a round trip more per file),
                    # and removing that header (`header = "Expect:"`) breaks the signature:
                    # libcurl signs the removal and never sends it (403). Each file is its
                    # own group (`next`), so the options are repeated; -Z runs them 4 at a time.
                    for index, path in enumerate(files):
                        rel = os.path.relpath(path, src)
                        f.write(f'url = "{through}/{BUCKET}/{target}/{rel}"\n')
                        f.write(f'data-binary = "@{path}"\n')
                        f.write('request = "PUT"\n')
                        f.write('aws-sigv4 = "aws:amz:us-east-1:s3"\n')
                        f.write(f'user = "{KEY}:{SECRET}"\n')
                        f.write('header = "x-amz-content-sha256: UNSIGNED-PAYLOAD"\n')
                        f.write('header = "Content-Type: application/octet-stream"\n')
                        f.write('output = "/dev/null"\n')
                        if index < len(files) - 1:
                            f.write('next\n')
                # --fail: a refused PUT is an error, never a fast baseline.
                return ["curl", "-s", "-S", "--fail", "-Z", "--parallel-max", "4", "-K", config], None
            return make

        os.sync()
        if "small" in CASES: rows.append(("2,000 × 4 KiB push", compare({
            "ferry": ferry_push(small),
            "rclone copy": rclone_copy(small),
            "curl -Z (signed PUT)": curl_parallel(small),
        })))
        if "push" in CASES: rows.append(("1 GiB push", compare({
            "ferry": ferry_push(big),
            "rclone copy": rclone_copy(big),
            "curl -T": lambda: (["curl", "-s", "-S", "--fail", *signed, "-T", os.path.join(big, "VID_0001.mp4"),
                                 f"{endpoint}/{BUCKET}/{fresh_name('t')}/VID_0001.mp4"], None),
        })))

        restored = os.path.join(work, "restored")

        def clear_restored():
            shutil.rmtree(restored, ignore_errors=True)
            shutil.rmtree(state, ignore_errors=True)

        if "pull" in CASES:
            shutil.rmtree(state, ignore_errors=True)
            run([FERRY, "push", big, "--to", f"s3://{BUCKET}/pullsrc", "--state", state], ferry_env)
            rows.append(("1 GiB pull", compare({
                "ferry": (lambda: ([FERRY, "pull", restored, "--from", f"s3://{BUCKET}/pullsrc", "--state", state], ferry_env),
                          clear_restored),
                "rclone copy": (lambda: (["rclone", "copy", f":s3:{BUCKET}/pullsrc", restored], rclone_env), clear_restored),
                "curl -o": lambda: (["curl", "-s", "-S", "--fail", *signed, "-o", os.path.join(work, "pulled.bin"),
                                     f"{endpoint}/{BUCKET}/pullsrc/VID_0001.mp4"], None),
            })))

        for name, seconds in (("delay10", 0.01), ("delay50", 0.05)):
            if name not in CASES:
                continue
            six_hundred = os.path.join(work, "six-hundred")
            if not os.path.isdir(six_hundred):
                shutil.copytree(os.path.join(small, "d00"), os.path.join(six_hundred, "d0"))
                shutil.copytree(os.path.join(small, "d01"), os.path.join(six_hundred, "d1"))
                shutil.copytree(os.path.join(small, "d02"), os.path.join(six_hundred, "d2"))
            with DelayProxy(endpoint, seconds, work) as through:
                rows.append((f"600 × 4 KiB push, {round(seconds * 1000)} ms per answer", compare({
                    "ferry": ferry_push(six_hundred, through),
                    "rclone copy": rclone_copy(six_hundred, through),
                    "curl -Z (signed PUT)": curl_parallel(six_hundred, through),
                })))

        if "noop" in CASES:
            shutil.rmtree(state, ignore_errors=True)
            run([FERRY, "push", small, "--to", f"s3://{BUCKET}/noop", "--state", state, "--transfers", "4"], ferry_env)
            run(["rclone", "copy", "--transfers", "4", small, f":s3:{BUCKET}/noop-r"], rclone_env)
            rows.append(("no-op push, 2,000 files", compare({
                "ferry": lambda: ([FERRY, "push", small, "--to", f"s3://{BUCKET}/noop", "--state", state, "--transfers", "4"], ferry_env),
                "rclone copy": lambda: (["rclone", "copy", "--transfers", "4", small, f":s3:{BUCKET}/noop-r"], rclone_env),
            })))
    finally:
        subprocess.run(["bash", os.path.join(SCRIPTS, "stop.sh"), server])
        shutil.rmtree(work, ignore_errors=True)
    write_table(
        f"S3 benchmark against SeaweedFS weed mini on 127.0.0.1, 4 transfers, {'medians of ' + str(RUNS) + ' runs' if RUNS > 1 else 'one run'} "
        f"({platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}). "
        "Ratio = the tool's time / ferry's (above 1: ferry is faster). curl is the protocol's limit: "
        "signed PUTs and GETs, no listing, no journal.",
        rows, "s3.md")


if __name__ == "__main__":
    main()
