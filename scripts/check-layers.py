#!/usr/bin/env python3
"""The layers of lib/ only point down: every `#include "FOLDER/..."` between lib/ folders must be
an edge docs/architecture.md allows, and only lib/store/ writes the ledger's tables (nodes,
covers, events, head_moves, sessions, source_records).

docs/architecture.md declares the layers in a table whose rows read
    | `folder` | what it owns | `dep`, `dep`, ... |
(the third cell lists the folders it may include; "—" for none). Exits 1 listing every include
line the declaration does not allow, every folder it does not declare, and any cycle in the
declaration itself; 0 when the code matches. Usage: scripts/check-layers.py [REPO_ROOT]
"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
lib = os.path.join(root, "lib")
doc = os.path.join(root, "docs", "architecture.md")

row = re.compile(r"^\|\s*`([a-z_]+)`\s*\|[^|]*\|\s*([^|]*)\|\s*$")
allowed = {}
for line in open(doc, encoding="utf-8"):
    m = row.match(line)
    if m:
        allowed[m.group(1)] = set(re.findall(r"`([a-z_]+)`", m.group(2)))

folders = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
problems = []
for d in folders:
    if d not in allowed:
        problems.append(f"lib/{d}/: not declared in docs/architecture.md")
for d, deps in allowed.items():
    for dep in deps:
        if dep not in allowed:
            problems.append(f"docs/architecture.md: `{d}` may include `{dep}`, which is not a declared layer")

# The declaration itself must be acyclic.
state = {}
def visit(n, path):
    if state.get(n) == 1:
        problems.append("docs/architecture.md: the layers form a cycle: " + " -> ".join(path + [n]))
        return
    if state.get(n) == 2:
        return
    state[n] = 1
    for m in sorted(allowed.get(n, ())):
        visit(m, path + [n])
    state[n] = 2
for n in sorted(allowed):
    visit(n, [])

inc = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
for d in folders:
    for dirpath, _, files in os.walk(os.path.join(lib, d)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = inc.match(line)
                    if not m or m.group(1) == d or m.group(1) not in folders:
                        continue
                    if m.group(1) not in allowed.get(d, set()):
                        problems.append(f"{os.path.relpath(path, root)}:{no}: lib/{d} includes {m.group(1)}/, "
                                        f"which docs/architecture.md does not allow")

# The ledger (docs/model.md "The append-only ledger") is written only through the Store: no SQL
# that writes one of its tables outside lib/store/.
LEDGER = ("nodes", "covers", "events", "head_moves", "sessions", "source_records")
write = re.compile(r"\b(INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+(%s)\b" % "|".join(LEDGER), re.I)
for top in ("lib", "cmd"):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        if os.path.relpath(dirpath, root).startswith(os.path.join("lib", "store")):
            continue
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = write.search(line)
                    if m:
                        problems.append(f"{os.path.relpath(path, root)}:{no}: writes the ledger table {m.group(2)} "
                                        "outside lib/store (go through Store)")

# The environment seam (docs/architecture.md "The environment seam"): in lib/, only
# lib/util/system_environment.cpp reads environment variables or the wall clock, writes to the
# terminal, installs signal handlers, raises signals or exits; and nothing in lib/ picks the
# system environment itself (cmd/ passes it in). Comments are not code.
PROCESS = re.compile(r"\b(getenv|setenv|unsetenv|sigaction|isatty)\s*\(|(?<![\w.>])(std::|::)?(signal|raise|abort)\s*\("
                     r"|\bstd::(quick_)?exit\s*\(|(?<![\w.>:])exit\s*\(\s*(\d|EXIT_)"
                     r"|\bstd::time\s*\(|\btime\s*\(\s*nullptr|system_clock::now|\bstd::(cerr|cout|clog)\b"
                     r"|\b(stderr|stdout)\b|\bsystem_environment\s*\(")
SEAM = os.path.join("lib", "util", "system_environment.cpp")
for dirpath, _, files in os.walk(lib):
    for f in sorted(files):
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, root)
        if rel == SEAM:
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            for no, line in enumerate(fh, 1):
                code = re.sub(r'"(\\.|[^"\\])*"', '""', line.split("//")[0])
                m = PROCESS.search(code)
                if m and not (rel == os.path.join("lib", "util", "environment.hpp") and "system_environment" in m.group(0)):
                    problems.append(f"{rel}:{no}: touches the process ({m.group(0).strip(' (')}) outside {SEAM}; "
                                    "take an Environment& (util/environment.hpp) instead")

# A strategy is named in one table (docs/architecture.md "Strategy names live in one table"):
# outside model/strategy_label.*, code compares StrategyLabel values, never a strategy's name as a
# string, in C++ (== "lcm", != "rolling", a name as a comparison's left side) or in SQL ('rolling').
NAMES = "rolling|lcm|snapcompact|notes|region"
NAME_CMP = re.compile(r'(==|!=)\s*"(%s)"|"(%s)"\s*(==|!=)|strategy.*\'(%s)\'' % (NAMES, NAMES, NAMES))
LABEL_TABLE = {os.path.join("lib", "model", "strategy_label.hpp"), os.path.join("lib", "model", "strategy_label.cpp")}
for top in ("lib", "cmd"):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            if rel in LABEL_TABLE:
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = NAME_CMP.search(line.split("//")[0])
                    if m:
                        problems.append(f"{rel}:{no}: compares a strategy name as a string ({m.group(0)}); "
                                        "use model/strategy_label.hpp's StrategyLabel")

# Unit tests mirror lib/ (docs/architecture.md "Tests").
unit = os.path.join(root, "tests", "unit")
test_dirs = {d for d in os.listdir(unit) if os.path.isdir(os.path.join(unit, d))}
for d in sorted(test_dirs - set(folders) - {"fuzz", "bench"}):
    problems.append(f"tests/unit/{d}/: names no folder of lib/ (unit tests mirror lib/)")
for d in sorted(set(folders) - test_dirs):
    problems.append(f"lib/{d}/: has no tests/unit/{d}/ (unit tests mirror lib/)")
for f in sorted(os.listdir(unit)):
    if f.endswith(".cpp"):
        problems.append(f"tests/unit/{f}: belongs in the tests/unit/<folder>/ of the lib/ folder it tests")

# Each derived table has one owner (docs/architecture.md "Each derived table has one owner"):
# the owner table is read from the document, and SQL writing one of those tables elsewhere fails.
owners = {}
doc_text = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
for m in re.finditer(r"^\s*\|\s*((?:`[a-z_]+`(?:,\s*)?)+)\s*\|\s*`(lib/[^`]+)`\s*\|", doc_text, re.M):
    for t in re.findall(r"`([a-z_]+)`", m.group(1)):
        owners[t] = m.group(2)
if not owners:
    problems.append("docs/architecture.md: no derived-table owner table found")
derived_write = re.compile(r"\b(INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+(%s)\b"
                           % "|".join(sorted(owners, key=len, reverse=True)), re.I) if owners else None
for top in ("lib", "cmd"):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = derived_write.search(line) if derived_write else None
                    if m and owners[m.group(2)] != rel:
                        problems.append(f"{rel}:{no}: writes {m.group(2)}, which {owners[m.group(2)]} owns")

# One connection interface, two engines (docs/backends.md "Writing SQL for both engines"):
# outside lib/store nothing includes libpq or the server engine, and nothing asks which engine a
# database is.
ENGINE = re.compile(r'^\s*#\s*include\s+[<"](libpq-fe\.h|store/pg\.hpp)[>"]|\bis_server(_url)?\s*\(')
for top in ("lib", "cmd"):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            if rel.startswith(os.path.join("lib", "store") + os.sep):
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    m = ENGINE.search(line.split("//")[0])
                    if m:
                        problems.append(f"{rel}:{no}: knows the database engine ({m.group(0).strip()}); "
                                        "only lib/store does (docs/backends.md)")

# Nothing in lib/ includes the command layer.
for dirpath, _, files in os.walk(lib):
    for f in files:
        path = os.path.join(dirpath, f)
        with open(path, encoding="utf-8", errors="replace") as fh:
            for no, line in enumerate(fh, 1):
                if re.match(r'^\s*#\s*include\s+"(\.\./)*cmd/', line):
                    problems.append(f"{os.path.relpath(path, root)}:{no}: lib/ includes cmd/")

for p in problems:
    print(p)
if problems:
    print(f"check-layers: {len(problems)} problem(s)", file=sys.stderr)
    sys.exit(1)
print(f"check-layers: {len(folders)} lib/ folders, every include points down as docs/architecture.md declares, "
      "only lib/store writes the ledger, only lib/util/system_environment.cpp touches the process, "
      "and strategy names are compared only in model/strategy_label",
      file=sys.stderr)
