#!/usr/bin/python3
"""Lists the functions of npukit's C++ sources longer than a limit (default 80
lines), longest first, so that a reader can see where a function wants named
steps. A function is a definition whose signature starts at column 0 (the
project does not indent namespaces) and ends at the next line that is a lone
"}"; lambdas count with their enclosing function, member functions defined
inside class bodies are not listed. Lines are counted from the signature's
first line to the closing brace.

    scripts/long_functions.py [--limit N] [PATH...]   (default: src tools python)
"""
import argparse
import os
import re
import sys

SKIP = re.compile(r"^(namespace|struct|class|union|enum|extern|template|using|typedef|#|//)")
EXTENSIONS = (".cpp", ".inc", ".hpp", ".h")


def functions(path):
    """(first line, length, name) of each function defined at column 0."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not re.match(r"^[A-Za-z_]", line) or SKIP.match(line) or "(" not in line:
            i += 1
            continue
        # The signature may span lines: up to the one ending in "{" (a
        # definition) or ";" (a declaration).
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
            j += 1
        last = lines[j].rstrip() if j < len(lines) else ";"
        if not last.endswith("{") or last.endswith("= {") or last.startswith("}"):  # a table
            i = j + 1
            continue
        end = j + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        name = line.split("(")[0].split()[-1].lstrip("*&")
        yield i + 1, end - i + 1, name
        i = end + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("paths", nargs="*", default=["src", "tools", "python"])
    a = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    found = []
    for p in a.paths:
        p = p if os.path.isabs(p) or os.path.exists(p) else os.path.join(root, p)
        walk = [(p, [], [os.path.basename(p)])] if os.path.isfile(p) else os.walk(p)
        for d, _, files in walk:
            for name in files:
                path = os.path.join(d if os.path.isdir(p) else os.path.dirname(p), name)
                if path.endswith(EXTENSIONS):
                    for line, length, fn in functions(path):
                        if length > a.limit:
                            found.append((length, os.path.relpath(path, root), line, fn))
    for length, path, line, fn in sorted(found, reverse=True):
        print(f"{length:5d}  {path}:{line}  {fn}")
    sys.stdout.flush()
    print(f"{len(found)} functions over {a.limit} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
