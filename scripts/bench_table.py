"""The Markdown table both benchmark scripts write: one row per tool per case, with the
tool's time divided by ferry's (ferry's speed relative to the tool)."""
import os


def write_table(title, rows, filename):
    """rows: (case, {tool: median seconds}). A `times` that also carries `samples` (every
    run's seconds per tool) and `rss` (peak resident MiB per tool), as bench-webdav.py's
    `Timings` does, fills the spread and memory columns; other rows leave them empty."""
    lines = [title, "", "| case | tool | seconds | runs (min–max) | peak RSS (MiB) | tool ÷ ferry |",
             "|---|---|---:|---:|---:|---:|"]
    for label, times in rows:
        samples = getattr(times, "samples", {})
        rss = getattr(times, "rss", {})
        for tool, seconds in times.items():
            ratio = "" if tool == "ferry" else f"{seconds / times['ferry']:.2f}"
            spread = f"{min(samples[tool]):.3f}–{max(samples[tool]):.3f}" if tool in samples else ""
            memory = f"{rss[tool]:.0f}" if tool in rss else ""
            lines.append(f"| {label} | {tool} | {seconds:.3f} | {spread} | {memory} | {ratio} |")
    table = "\n".join(lines)
    os.makedirs("bench-results", exist_ok=True)
    with open(os.path.join("bench-results", filename), "w") as f:
        f.write(table + "\n")
    print(table)
