"""The Markdown table both benchmark scripts write: one row per tool per case, with the
tool's time divided by ferry's (ferry's speed relative to the tool)."""
import os


def write_table(title, rows, filename):
    lines = [title, "", "| case | tool | seconds | tool ÷ ferry |", "|---|---|---:|---:|"]
    for label, times in rows:
        for tool, seconds in times.items():
            ratio = "" if tool == "ferry" else f"{seconds / times['ferry']:.2f}"
            lines.append(f"| {label} | {tool} | {seconds:.3f} | {ratio} |")
    table = "\n".join(lines)
    os.makedirs("bench-results", exist_ok=True)
    with open(os.path.join("bench-results", filename), "w") as f:
        f.write(table + "\n")
    print(table)
