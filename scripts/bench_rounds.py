"""Rounds of tools on one case, as the WebDAV and S3 benchmarks run them: every tool once
per round, each round starting with the next tool (the first run after a round's clean-up,
or after the previous case, meets the page cache and this VM's memory in another state than
the rest, whichever tool it is). Every run's seconds and peak memory are kept, so a table
gives the median, the spread and the largest peak (bench_table.write_table)."""
import os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_process  # noqa: E402


class Timings(dict):
    """Median seconds per tool, with every run's seconds (`samples`) and the largest peak
    RSS of its runs (`rss`), for bench_table.write_table."""
    def __init__(self, medians, samples, rss):
        super().__init__(medians)
        self.samples = samples
        self.rss = rss


def once(make_command, prepare=None, base_env=None):
    """Runs one tool once; returns (seconds, peak RSS in MiB). A non-zero exit ends the
    benchmark with the tool's last words, so no table holds the time of a broken run."""
    command, env = make_command()
    if prepare:
        prepare()
    os.sync()  # no writeback of the previous run's files in this one's time
    command, report = bench_process.measured(command)
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors,
                                   env={**(os.environ if base_env is None else base_env), **(env or {})})
        process.wait()
        seconds = time.perf_counter() - start
        if process.returncode != 0:
            errors.seek(0)
            tail = errors.read().decode("utf-8", "replace")[-2000:]
            sys.exit(f"bench: {' '.join(command)} exited {process.returncode}:\n{tail}")
    return seconds, bench_process.peak_mib(report)


def compare(tools, runs, base_env=None):
    """Medians of `runs` rounds. tools: {name: make_command or (make_command, prepare)};
    make_command returns (argv, extra environment); base_env is the environment the extra
    one is laid over (this process's by default)."""
    samples = {name: [] for name in tools}
    rss = {name: 0.0 for name in tools}
    names = list(tools)
    for round in range(runs):
        for name in names[round % len(names):] + names[:round % len(names)]:
            make, prepare = tools[name] if isinstance(tools[name], tuple) else (tools[name], None)
            seconds, peak = once(make, prepare, base_env)
            samples[name].append(seconds)
            rss[name] = max(rss[name], peak)
    for name, values in samples.items():
        print(f"{name}: {' '.join(f'{v:.2f}' for v in values)} (peak {rss[name]:.0f} MiB)", file=sys.stderr)
    return Timings({name: statistics.median(values) for name, values in samples.items()}, samples, rss)
