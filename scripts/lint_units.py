#!/usr/bin/env python3
"""clang-tidy over npukit's sources, several files per clang-tidy process.

Usage: lint_units.py BUILD_DIR JOBS GROUP_SIZE FILE...   (scripts/lint.sh calls it)

clang-tidy 14 runs every check over the whole translation unit, the standard
headers included, and most of each run is that part (docs/ci.md has the
figures). So files that share one compile command and one directory are
checked together, up to GROUP_SIZE at a time, as one translation unit made by
concatenating them:

  * Each file's text follows a `#line 1 "<file>"` directive and the whole
    unit is clang-tidy's main file, so checks that look at the main file only
    (misc-unused-using-decls, ...) still see every file.
  * A `#define` before each file restarts readability-duplicate-include's
    list of headers already included (the check forgets it at a #define).
  * `-iquote <directory>` keeps the files' own `#include "..."` lookups.
  * Diagnostics at a line of the unit are printed at the file and line they
    came from.
  * Files that declare a name at namespace scope that another file of the
    group declares or sees in a header (the kernels' kLanes, two internal
    helpers of one name) go to different units (make_units); a unit that
    still does not compile is checked again file by file, so every file is
    checked and a file's own compile error is reported as before.

Not reproduced: effects across the files of one unit (a using-declaration of
one file counted as used by a later file). GROUP_SIZE 1 (NPUKIT_LINT_GROUP=1
for scripts/lint.sh) checks each file alone.
"""
import concurrent.futures
import functools
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PCH_FLAGS = re.compile(r" -Winvalid-pch| -fpch-instantiate-templates|"
                       r" (-Xclang )?-include(-pch)? (-Xclang )?\S*/cmake_pch\.[\w.]+")
DIAG_AT = re.compile(r"^(\S+?):(\d+):(\d+): ")


def lint_database(build_dir):
    """The build's compile commands without precompiled headers (clang cannot
    read g++'s), plus an entry for each source that a unity file includes,
    with that unity file's command (the Python module always, the CLI and the
    tests in builds without a compiler launcher)."""
    db = {}
    for e in json.load(open(os.path.join(build_dir, "compile_commands.json"))):
        e["command"] = PCH_FLAGS.sub("", e["command"])
        db[e["file"]] = e
        if "/Unity/unity_" not in e["file"]:
            continue
        for line in open(e["file"]):
            m = re.match(r'#include "(.+)"', line.strip())
            if m:
                db[m.group(1)] = dict(e, file=m.group(1), command=e["command"].replace(e["file"], m.group(1)))
    return db


class Unit:
    """Files checked by one clang-tidy process: one file as it is, or a
    concatenation (path) of several with the line where each starts."""

    def __init__(self, files):
        self.files = files
        self.path = None
        self.starts = []  # (first line in the unit, file)

    def write(self, path, entry):
        directory = os.path.dirname(self.files[0])
        line = 1
        with open(path, "w") as out:
            for f in self.files:
                text = open(f).read()
                if not text.endswith("\n"):
                    text += "\n"
                out.write(f'#define NPUKIT_LINT_NEXT_FILE\n#line 1 "{f}"\n{text}')
                self.starts.append((line + 2, f))
                line += 2 + text.count("\n")
        self.path = path
        command = entry["command"].replace(entry["file"], path).replace(" -c ", f" -iquote {directory} -c ", 1)
        return dict(entry, file=path, command=command)

    def origin(self, line):
        """(file, line) of a line of the concatenation."""
        for start, f in reversed(self.starts):
            if line >= start:
                return f, line - start + 1
        return self.path, line


# A name declared at namespace scope: clang-formatted code puts such
# declarations (not function bodies or class members) at column 0.
TOP_NAME = re.compile(r"^(?:struct|class|union|enum(?: class)?)\s+(\w+)|"
                      r"^using\s+(\w+)\s*=|"
                      r"^#\s*define\s+(\w+)|"
                      r"^(?!namespace\b|using\b|template\b|extern\b|return\b|#)(?=\w)[\w:<>,*&\s]*?\b(\w+)\s*(?:\(|=|\{|;|\[)")
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def resolve(including, name):
    """The project file a quoted #include names, looked up as the compiler
    does (beside the including file, then include/ and src/), or None."""
    for base in (os.path.dirname(including), os.path.join(ROOT, "include"), os.path.join(ROOT, "src")):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path):
            return path
    return None


@functools.lru_cache(maxsize=None)
def declared(path):
    """(names declared at namespace scope in the file and the .inc files it
    includes, the project headers it includes)."""
    names, headers = set(), set()
    for line in open(path, errors="replace"):
        m = TOP_NAME.match(line)
        if m:
            names.add(next(g for g in m.groups() if g))
        m = QUOTED_INCLUDE.match(line)
        target = resolve(path, m.group(1)) if m else None
        if target is None or os.path.basename(target).startswith("isa-"):
            continue
        if target.endswith(".inc"):  # text of the file itself
            inc_names, inc_headers = declared(target)
            names |= inc_names
            headers |= inc_headers
        else:
            headers.add(target)
    return frozenset(names), frozenset(headers)


def header_names(path):
    """Names declared by the project headers a file includes, transitively."""
    todo, seen, names = list(declared(path)[1]), set(), set()
    while todo:
        header = todo.pop()
        if header in seen:
            continue
        seen.add(header)
        header_own, more = declared(header)
        names |= header_own
        todo += more
    return names


def make_units(files, db, group_size):
    """Files of one directory and one compile command (source and object
    aside) in groups of up to group_size, in the order given, such that no
    file declares a name that another file of its group declares or sees in
    a header (a helper of internal linkage defined twice, or made ambiguous
    with a header's name, would not compile). The names are a guess from the
    text, on the safe side; a unit that still does not compile is checked
    file by file (check)."""
    buckets = {}
    for f in files:
        entry = db.get(f)
        if entry is None or group_size <= 1:
            buckets[("", f)] = [f]
            continue
        key = re.sub(r" -o \S+", "", entry["command"].replace(f, "<source>"))
        buckets.setdefault((os.path.dirname(f), key), []).append(f)
    units = []
    for members in buckets.values():
        groups = []  # [files, names they declare, names their headers declare]
        for f in members:
            seen = header_names(f)
            own = declared(f)[0] - seen  # a definition of a header's name is that one entity
            group = next((g for g in groups
                          if len(g[0]) < group_size and not own & (g[1] | g[2]) and not seen & g[1]), None)
            if group is None:
                groups.append([[f], set(own), set(seen)])
            else:
                group[0].append(f)
                group[1] |= own
                group[2] |= seen
        units += [Unit(g[0]) for g in groups]
    return units


def tidy(db_dir, source):
    # The project's .clang-tidy by name: a unit lives outside the source tree,
    # where clang-tidy's upward search would not find it.
    proc = subprocess.run(["clang-tidy", "-p", db_dir, f"--config-file={ROOT}/.clang-tidy", "--quiet", source],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False)
    return proc.returncode, proc.stdout


def check(unit, dbs):
    if unit.path is None:
        return tidy(dbs["files"], unit.files[0])
    rc, text = tidy(dbs["units"], unit.path)
    if rc != 0 or ": error: " in text:
        results = [tidy(dbs["files"], f) for f in unit.files]
        print(f"lint: {len(unit.files)} files checked one by one (not one translation unit): "
              + " ".join(os.path.relpath(f, ROOT) for f in unit.files), file=sys.stderr)
        return max(r for r, _ in results), "".join(t for _, t in results)

    def relocate(m):
        if m.group(1) != unit.path:
            return m.group(0)
        f, line = unit.origin(int(m.group(2)))
        return f"{f}:{line}:{m.group(3)}: "

    return rc, "".join(DIAG_AT.sub(relocate, line) for line in text.splitlines(True))


def main():
    build_dir, jobs, group_size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    files = [os.path.abspath(f) for f in sys.argv[4:]]
    db = lint_database(build_dir)
    with tempfile.TemporaryDirectory(prefix="npukit-lint.") as tmp:
        dbs = {"files": os.path.join(tmp, "files"), "units": os.path.join(tmp, "units")}
        for d in dbs.values():
            os.makedirs(d)
        units = make_units(files, db, group_size)
        unit_entries = [u.write(os.path.join(dbs["units"], f"unit_{i}.cpp"), db[u.files[0]])
                        for i, u in enumerate(units) if len(u.files) > 1]
        json.dump(list(db.values()), open(os.path.join(dbs["files"], "compile_commands.json"), "w"))
        json.dump(unit_entries, open(os.path.join(dbs["units"], "compile_commands.json"), "w"))
        worst = 0
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for rc, text in pool.map(lambda u: check(u, dbs), units):
                sys.stdout.write(text)
                sys.stdout.flush()
                worst = max(worst, rc)
    print(f"lint: {len(files)} files in {len(units)} clang-tidy runs", file=sys.stderr)
    return worst


if __name__ == "__main__":
    sys.exit(main())
