"""How the scale and watch benchmarks run a tool: its time, its peak memory, its CPU, and
the CPUs it may use.

- `run_measured` runs a command to its end: wall seconds and the tool's own peak resident
  set, measured by GNU time (`measured`). A non-zero exit ends the benchmark with the last
  lines of the tool's output, so no table ever holds the time of a broken run.
- `Background` does the same for a long-running process (a daemon): started in the
  background, its peak read from /proc before it is ended by a signal.
- `pin_to_one_core` makes every later command run under `taskset -c 0` (the one-core mode:
  ferry and the reference tools alike, the way a NAS or a Raspberry Pi runs them).
- `cpu_seconds` reads a running process's user + system time from /proc/PID/stat.
- `wait_for` polls a condition with a deadline.
"""
import atexit, os, select, subprocess, sys, tempfile, time

_cpu_prefix = []


def pin_to_one_core():
    """Every command started from now on runs under `taskset -c 0` (which execs the tool in
    its own process)."""
    global _cpu_prefix
    _cpu_prefix = ["taskset", "-c", "0"]


def cpu_mode():
    """How the tools were run, for a table's heading."""
    return "one core (`taskset -c 0`)" if _cpu_prefix else f"all {os.cpu_count()} cores"


def load():
    """The one-minute load average."""
    return os.getloadavg()[0]


def _tail(stream, limit=1500, lines=8):
    stream.flush()
    size = stream.seek(0, os.SEEK_END)
    stream.seek(max(0, size - limit))
    text = stream.read().decode(errors="replace").strip()
    return "\n".join("    " + line[-300:] for line in text.splitlines()[-lines:])


def fail(command, code, out, err, what="exited"):
    """Ends the benchmark: the command, its exit status and the last lines it wrote (stderr
    first; ferry's --json summary, with the per-file errors, is on stdout)."""
    parts = [f"bench: {' '.join(command)} {what} {code}"]
    for name, stream in (("stderr", err), ("stdout", out)):
        tail = _tail(stream)
        if tail:
            parts.append(f"  last lines of its {name}:\n{tail}")
    sys.exit("\n".join(parts))


def measured(command):
    """The command run under GNU time, and the file where time writes the tool's peak RSS.

    wait4's ru_maxrss from this script is not the tool's: Linux carries a process's peak
    over execve, so a child forked from this Python process starts with the script's own
    peak (151 MiB while it holds a 1,000,000-file tree's names; every row then read 151).
    GNU time is small when it forks the tool, so its figure is the tool's alone."""
    report = tempfile.NamedTemporaryFile(prefix="bench-peak-", delete=False)
    report.close()
    atexit.register(lambda: os.path.exists(report.name) and os.unlink(report.name))
    return ["/usr/bin/time", "-f", "%M", "-o", report.name] + _cpu_prefix + list(command), report.name


def peak_mib(report_path):
    """The peak RSS GNU time wrote (KiB, on its last line: a failed command's report starts
    with "Command exited with non-zero status")."""
    with open(report_path) as f:
        lines = f.read().split()
    os.unlink(report_path)
    return int(lines[-1]) / 1024


def run_measured(command, env=None):
    """Runs a command; returns (seconds, peak RSS in MiB). Fails loudly on a non-zero exit.

    Output goes to temporary files, not pipes: a child that writes more than a pipe holds
    would otherwise block before it ends.
    """
    command, report = measured(command)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        process.wait()
        elapsed = time.perf_counter() - start
        if process.returncode != 0:
            fail(command, process.returncode, out, err)
    return elapsed, peak_mib(report)


class Background:
    """A long-running command (a daemon) with its output in files: `output_path` is its
    stdout, readable while it runs."""

    def __init__(self, command, cwd=None, env=None):
        self.command = _cpu_prefix + list(command)
        self._out = tempfile.NamedTemporaryFile(prefix="bench-stdout-")
        self._err = tempfile.NamedTemporaryFile(prefix="bench-stderr-")
        self.output_path = self._out.name
        self.started = time.perf_counter()
        self.process = subprocess.Popen(self.command, cwd=cwd, env=env, stdout=self._out, stderr=self._err)
        self.pid = self.process.pid
        atexit.register(self._kill)  # a benchmark that fails elsewhere leaves no daemon behind

    def _kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def check_running(self):
        """Fails loudly when the process has already exited."""
        if self.process.poll() is not None:
            fail(self.command, self.process.returncode, self._out, self._err, "exited early with")

    def finish(self, signal_number, timeout=120):
        """Sends the signal and waits; returns the peak RSS in MiB until the signal (the
        process's own high-water mark, VmHWM: see `measured` for why not wait4's). Fails
        loudly on a non-zero exit or when the process does not end within `timeout` seconds."""
        peak = peak_of_running(self.pid)
        # A pidfd becomes readable the moment the process exits: the wait is exact, with
        # a deadline.
        pidfd = os.pidfd_open(self.pid)
        try:
            # os.kill, not Popen.send_signal: that polls first, and a process that has just
            # exited would be reaped there, its exit status lost to the wait below.
            os.kill(self.pid, signal_number)
            if not select.select([pidfd], [], [], timeout)[0]:
                self._kill()
                fail(self.command, f"no exit {timeout} s after signal {signal_number}", self._out, self._err, "gave")
        finally:
            os.close(pidfd)
        _, status = os.waitpid(self.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        if self.process.returncode != 0:
            fail(self.command, self.process.returncode, self._out, self._err)
        self._out.close()
        self._err.close()
        return peak

    def fail(self, message):
        """Ends the benchmark with a message and this process's last output, killing it."""
        self._kill()
        fail(self.command, f"({message})", self._out, self._err, "failed")


def peak_of_running(pid):
    """A running process's peak RSS in MiB since its exec (VmHWM in /proc/PID/status)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def cpu_seconds(pid):
    """User + system CPU seconds a running process has used (/proc/PID/stat, fields 14
    and 15, in clock ticks; the name in field 2 may hold spaces, so split after its `)`)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(condition, timeout=300, what="a condition", poll=0.005, on_timeout=None):
    """Polls `condition` until it is true and returns the seconds it took; after `timeout`
    seconds calls `on_timeout(message)` (e.g. `Background.fail`), or ends the benchmark."""
    start = time.perf_counter()
    while not condition():
        if time.perf_counter() - start > timeout:
            message = f"timed out after {timeout} s waiting for {what}"
            (on_timeout or (lambda text: sys.exit("bench: " + text)))(message)
        time.sleep(poll)
    return time.perf_counter() - start
