"""A `ferry watch` process under a benchmark (scripts/bench-watch.py and the daemon row of
`make bench-scale`).

`ferry watch SRC --to DST --state STATE --config CONFIG --json` runs in the background
(under `taskset -c 0` in the one-core mode, see bench_process), its JSON lines in a file.
Each run the process makes, the start-up run first, ends with a `summary` event on stdout:
`wait_for_runs(n)` waits for the n-th, which is how "ready" is measured (the start-up run
ended; daemon-status.json says the same with `last_run_ended_at`, but is written only
about once a second). `time_to_remote` writes a file and times its arrival on the remote.
`stop` sends SIGTERM, which ferry answers by stopping at a resumable point and exiting 0,
and returns the process's peak RSS.
"""
import json, os, signal, time

import bench_process


def write_config(path, quiet_period):
    with open(path, "w") as f:
        f.write(f"watch:\n  quiet_period: {quiet_period}\n")


class WatchProcess:
    def __init__(self, ferry, src, dst, state, config, extra=(), cwd=None):
        for folder in (src, dst):
            os.makedirs(os.path.join(cwd or "", folder), exist_ok=True)
        command = [ferry, "watch", src, "--to", dst, "--state", state, "--config", config, "--json", *extra]
        self.background = bench_process.Background(command, cwd=cwd)
        self.pid = self.background.pid
        self.summaries = []  # (seconds since start, the summary event), in order
        self._offset = 0
        self._partial = b""

    def _read_events(self):
        with open(self.background.output_path, "rb") as f:
            f.seek(self._offset)
            data = f.read()
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        now = time.perf_counter() - self.background.started
        for line in lines:
            if b'"summary"' not in line:
                continue
            event = json.loads(line)
            if event.get("event") == "summary":
                self.summaries.append((now, event))

    def wait_for_runs(self, count, timeout=3600, poll=0.002):
        """Waits until `count` runs have ended; returns the seconds from the start to the
        end of the last of them. Fails loudly when the process exits, when a run reports
        failed files, or after `timeout` seconds. `poll`: how often the output is read (a
        run that sends many files prints a line for each)."""
        def ended():
            self._read_events()
            if len(self.summaries) < count:
                self.background.check_running()
                return False
            return True
        bench_process.wait_for(ended, timeout, f"run {count} of {' '.join(self.background.command)}",
                               poll=poll, on_timeout=self.background.fail)
        for _, event in self.summaries:
            if event.get("failed") or event.get("failures"):
                self.background.fail(f"a run reported failures: {json.dumps(event)[:600]}")
        return self.summaries[count - 1][0]

    def uploaded(self):
        """Files the runs so far uploaded, by their summaries."""
        self._read_events()
        return sum(event.get("uploaded", 0) for _, event in self.summaries)

    def time_to_remote(self, local_path, remote_path, payload, timeout=300):
        """Writes `payload` to local_path; returns the seconds until remote_path exists
        with its size (ferry names a file on the remote only once it is complete)."""
        start = time.perf_counter()
        with open(local_path, "wb") as f:
            f.write(payload)

        def arrived():
            try:
                return os.stat(remote_path).st_size == len(payload)
            except FileNotFoundError:
                self.background.check_running()
                return False
        bench_process.wait_for(arrived, timeout, f"{remote_path}", poll=0.002, on_timeout=self.background.fail)
        return time.perf_counter() - start

    def cpu_seconds(self):
        return bench_process.cpu_seconds(self.pid)

    def stop(self, timeout=120):
        """SIGTERM; returns the peak RSS in MiB once the process has exited 0."""
        return self.background.finish(signal.SIGTERM, timeout)
