"""How the scale and watch benchmarks run a tool: its time, its peak memory, its CPU, and
the CPUs it may use.

- `run_measured` runs a command to its end: wall seconds and the child's own peak resident
  set (wait4's ru_maxrss). A non-zero exit ends the benchmark with the last lines of the
  tool's output, so no table ever holds the time of a broken run.
- `start` / `finish` do the same for a long-running process (a daemon): started in the
  background, ended by a signal, waited for with wait4.
- `pin_to_one_core` makes every later command run under `taskset -c 0` (the one-core mode:
  ferry and the reference tools alike, the way a NAS or a Raspberry Pi runs them).
- `cpu_seconds` reads a running process's user + system time from /proc/PID/stat.
- `wait_for` polls a condition with a deadline.
"""
import atexit, os, select, subprocess, sys, tempfile, time

_cpu_prefix = []


def pin_to_one_core():
    """Every command started from now on runs under `taskset -c 0`. taskset execs the
    command in its own process, so wait4's figures are still the tool's."""
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


def run_measured(command, env=None):
    """Runs a command; returns (seconds, peak RSS in MiB). Fails loudly on a non-zero exit.

    Output goes to temporary files, not pipes: a child that writes more than a pipe holds
    would otherwise block before wait4 returns.
    """
    command = _cpu_prefix + list(command)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            fail(command, process.returncode, out, err)
    return elapsed, usage.ru_maxrss / 1024


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
        """Sends the signal and waits; returns the peak RSS in MiB. Fails loudly on a
        non-zero exit or when the process does not end within `timeout` seconds."""
        # A pidfd becomes readable the moment the process exits: the wait is exact, with
        # a deadline, and wait4 still reaps it (and gives its peak RSS).
        pidfd = os.pidfd_open(self.pid)
        try:
            # os.kill, not Popen.send_signal: that polls first, and a process that has just
            # exited would be reaped there, its rusage lost to wait4 below.
            os.kill(self.pid, signal_number)
            if not select.select([pidfd], [], [], timeout)[0]:
                self._kill()
                fail(self.command, f"no exit {timeout} s after signal {signal_number}", self._out, self._err, "gave")
        finally:
            os.close(pidfd)
        _, status, usage = os.wait4(self.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        if self.process.returncode != 0:
            fail(self.command, self.process.returncode, self._out, self._err)
        self._out.close()
        self._err.close()
        return usage.ru_maxrss / 1024

    def fail(self, message):
        """Ends the benchmark with a message and this process's last output, killing it."""
        self._kill()
        fail(self.command, f"({message})", self._out, self._err, "failed")


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
