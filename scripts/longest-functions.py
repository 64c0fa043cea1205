#!/usr/bin/env python3
"""The longest functions in Ferry's Swift sources, for the readability table in
docs/architecture.md and the closing notes of refactoring work.

    scripts/longest-functions.py [--top N] [--rev REV] [--markdown]

A function's length is the lines from its declaration to its closing brace, as the code
reads; nested functions and closures count toward the function that holds them, and are
listed on their own too only when they are named functions. With --rev, the sources of a
git revision are read (`git show REV:path`) instead of the working tree.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOTS = ("Sources", "Plugins")
DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|static|class|final|"
    r"override|mutating|nonisolated|convenience|required|@MainActor|@Sendable|@inlinable|@discardableResult)\s+)*"
    r"(?:func\s+([^\s(<]+)|(init)[?!]?\s*[(<]|(deinit)\b|(?:var|let)\s+(\w+)\s*:[^=]*\{\s*$)")
# A line that carries on a signature begun above: its rest, effects, return type or clause.
CONTINUATION = re.compile(r"^\s*(?:\)|async\b|throws\b|rethrows\b|->|where\b|\{)")
TYPE = re.compile(r"^\s*(?:[\w@]+\s+)*(?:struct|class|enum|actor|extension|protocol)\s+([\w.]+)")


def strip_strings_and_comments(line, in_block_comment):
    """The line without string literals and comments (braces inside them do not count)."""
    out = []
    i = 0
    in_string = False
    while i < len(line):
        if in_block_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i = end + 2
            in_block_comment = False
            continue
        c = line[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_block_comment = True
            i += 2
            continue
        if c == '"':
            in_string = True
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out), in_block_comment


def functions(path, text):
    """(length, qualified name, path:line) for every function body in one file."""
    lines = text.split("\n")
    results = []
    open_functions = []  # (name, start line, depth at which its body opened)
    types = []  # (name, depth at which its body opened)
    depth = 0
    in_block_comment = False
    in_multiline_string = False
    pending = None  # a declaration whose body has not opened yet
    pending_parens = 0
    for number, raw in enumerate(lines, 1):
        if raw.count('"""') % 2 == 1:
            in_multiline_string = not in_multiline_string
            continue
        if in_multiline_string:
            continue
        code, in_block_comment = strip_strings_and_comments(raw, in_block_comment)
        declared = DECLARATION.match(code)
        if declared is not None:
            pending_parens = code.count("(") - code.count(")")
        elif pending is not None and (pending_parens > 0 or CONTINUATION.match(code)):
            # A signature over several lines: the body's brace comes on a later one.
            declared = pending
            pending_parens += code.count("(") - code.count(")")
        pending = None
        type_match = TYPE.match(code) if not declared else None
        for c in code:
            if c == "{":
                depth += 1
                if declared is not None:
                    name = next(g for g in declared.groups() if g)
                    owner = types[-1][0] if types else Path(path).stem
                    open_functions.append((f"{owner}.{name}", number, depth))
                    declared = None
                elif type_match is not None:
                    types.append((type_match.group(1), depth))
                    type_match = None
            elif c == "}":
                if open_functions and open_functions[-1][2] == depth:
                    name, start, _ = open_functions.pop()
                    results.append((number - start + 1, name, f"{path}:{start}"))
                elif types and types[-1][1] == depth:
                    types.pop()
                depth -= 1
        if declared is not None:
            pending = declared
    return results


def sources(rev):
    if rev is None:
        for root in ROOTS:
            for path in sorted(Path(root).rglob("*.swift")):
                yield str(path), path.read_text(encoding="utf-8")
        return
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, *ROOTS],
                            check=True, capture_output=True, text=True).stdout.split()
    for path in listed:
        if path.endswith(".swift"):
            text = subprocess.run(["git", "show", f"{rev}:{path}"], check=True, capture_output=True,
                                  text=True).stdout
            yield path, text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--rev")
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args()
    found = [entry for path, text in sources(options.rev) for entry in functions(path, text)]
    found.sort(key=lambda entry: (-entry[0], entry[1]))
    if options.markdown:
        print("| lines | function | where |\n|---:|---|---|")
        for length, name, where in found[:options.top]:
            print(f"| {length} | `{name}` | {where} |")
    else:
        for length, name, where in found[:options.top]:
            print(f"{length:5d}  {name:55s} {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
