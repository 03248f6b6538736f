#!/usr/bin/env python3
"""Checks that each source folder still compiles as one unity translation unit.

A unity build (CMake option CTXFOLD_UNITY, docs/architecture.md "Building") pastes the .cpp files
of one folder of a target together (lib/render/, cmd/, tests/unit/import/), so a name defined at
file scope (an anonymous namespace, a static function) must not be defined again by another file
of the same folder, and a `using namespace` of one file reaches the files after it. A build with
ccache (the usual developer machine) compiles file by file and never sees such a clash; CI, which
has no ccache, builds unity. This check makes the same units from the build's
compile_commands.json and runs the compiler with -fsyntax-only on each, so the clash shows on any
machine.

Usage: scripts/check-unity.py [BUILD_DIR]   (default build/; needs its compile_commands.json)
Exits 1 naming the clashes the compiler reports, 0 when every folder compiles as one unit.
"""
import collections
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

# The targets built from many files; each bench tool and fuzz helper is one or two files.
TARGETS = ("ctxfold_lib.dir", "ctxfold.dir", "ctxfold_tests.dir")


def target_of(entry):
    out = entry.get("output") or entry["command"].split(" -o ")[1].split()[0]
    parts = out.split("/")
    return parts[1] if len(parts) > 1 and parts[0] == "CMakeFiles" else None


def unity_command(entry):
    """The entry's compiler command made to check the unit read from stdin, without its launcher."""
    argv = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    if os.path.basename(argv[0]) == "ccache":
        argv = argv[1:]
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-MD", "-MMD") or a == entry["file"]:
            continue
        out.append(a)
    return out + ["-fsyntax-only", "-w", "-x", "c++", "-"]


def check(target, entries):
    # CMake's order: the target's source list, which its file(GLOB) keeps sorted.
    unit = "".join(f'#include "{e["file"]}"\n' for e in sorted(entries, key=lambda e: e["file"]))
    cmd = unity_command(entries[0])
    r = subprocess.run(cmd, input=unit, text=True, capture_output=True, cwd=entries[0]["directory"])
    clashes = [l for l in r.stderr.splitlines()
               if "error:" in l and ("redefinition" in l or "conflicts with" in l or "ambiguous" in l)]
    if r.returncode != 0 and not clashes:
        clashes = [l for l in r.stderr.splitlines() if "error:" in l][:20]
    return target, len(entries), r.returncode, clashes


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    with open(os.path.join(build, "compile_commands.json")) as f:
        cc = json.load(f)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    groups = collections.defaultdict(list)
    for e in cc:
        t = target_of(e)
        if t in TARGETS and e["file"].endswith(".cpp") and e["file"].startswith(root + "/"):
            folder = os.path.relpath(os.path.dirname(e["file"]), root)
            groups[f"{t.removesuffix('.dir')} {folder}/"].append(e)
    failed = False
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for target, n, rc, clashes in pool.map(lambda t: check(t, groups[t]), sorted(groups)):
            if rc == 0:
                continue
            failed = True
            print(f"check-unity: {target}: {n} sources do not compile as one unit:", file=sys.stderr)
            for l in dict.fromkeys(clashes):
                print(f"  {l}", file=sys.stderr)
    if failed:
        print("check-unity: rename the file-scope names above so each is unique within its folder",
              file=sys.stderr)
    else:
        print(f"check-unity: {len(groups)} folders, each compiles as one unit")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
