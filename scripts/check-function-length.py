#!/usr/bin/env python3
"""Fail on a function body in lib/ or cmd/ longer than the limit docs/architecture.md states.

A function is a top-level brace block (at namespace depth) whose opening follows a `)` — a
definition, not a struct, enum or namespace. Strings, character literals and comments are
skipped, so braces inside them do not count. The limit and the stated exceptions are read from
the "Function length" section of docs/architecture.md: a line `limit: N` and one bullet per
exception, "- `path` `function-name` — why".

Usage: check-function-length.py [ROOT] [--list]  (--list prints every function over the limit)
"""
import os
import re
import sys


def strip_code(text):
    """Blank out comments, string and character literals, keeping newlines and length."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """Yield (name, first_line, line_count) of each function definition in a file."""
    text = strip_code(open(path, encoding="utf-8", errors="replace").read())
    depth = 0
    stack = []  # (is_function, start_index, name) per open brace
    fn_depth = None
    i = 0
    while i < len(text):
        c = text[i]
        if c == "{":
            if fn_depth is None:
                head = text[max(0, text.rfind(";", 0, i), text.rfind("}", 0, i), text.rfind("{", 0, i)) + 1:i]
                head_s = head.strip()
                is_fn = False
                name = ""
                if head_s and not re.match(r"^(namespace|struct|class|enum|union|extern)\b", head_s) and "=" not in head_s.split("(")[0]:
                    # a definition head ends in ')' plus qualifiers or a member-init list / trailing return
                    if re.search(r"\)\s*(const|noexcept|override|final|mutable|->[^{]*|\s)*$", head_s) or re.search(r"\)\s*:\s*[\w:]+\s*[({]", head_s):
                        m = re.search(r"([~\w:]+|operator\s*[^\s(]+)\s*\(", head_s)
                        if m:
                            name = m.group(1)
                            is_fn = name not in ("if", "for", "while", "switch", "catch")
                if is_fn:
                    fn_depth = depth
                    stack.append((True, i, name))
                else:
                    stack.append((False, i, ""))
            else:
                stack.append((False, i, ""))
            depth += 1
        elif c == "}":
            depth -= 1
            if stack:
                is_fn, start, name = stack.pop()
                if is_fn and fn_depth == depth:
                    first = text.count("\n", 0, start) + 1
                    last = text.count("\n", 0, i) + 1
                    yield name, first, last - first + 1
                    fn_depth = None
        i += 1


def read_rules(root):
    doc = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
    m = re.search(r"^## Function length\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
    if not m:
        sys.exit("docs/architecture.md has no '## Function length' section")
    sec = m.group(1)
    lim = re.search(r"^limit: (\d+)", sec, re.M)
    if not lim:
        sys.exit("docs/architecture.md 'Function length' states no 'limit: N' line")
    exceptions = set(re.findall(r"^- `([^`]+)` `([^`]+)`", sec, re.M))
    return int(lim.group(1)), exceptions


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    listing = "--list" in sys.argv
    limit, exceptions = read_rules(root)
    over, used = [], set()
    for top in ("lib", "cmd"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".cpp", ".hpp")):
                    continue
                p = os.path.join(d, f)
                rel = os.path.relpath(p, root)
                for name, line, count in functions(p):
                    if count <= limit:
                        continue
                    short = name.split("::")[-1]
                    key = next(((rel, e) for (r, e) in exceptions if r == rel and e in (name, short)), None)
                    if key:
                        used.add(key)
                        if not listing:
                            continue
                    over.append((count, rel, line, name, bool(key)))
    over.sort(reverse=True)
    bad = [o for o in over if not o[4]]
    for count, rel, line, name, ok in over:
        print(f"{rel}:{line}: {name} is {count} lines{' (stated exception)' if ok else ''}")
    stale = exceptions - used
    for rel, name in sorted(stale):
        print(f"docs/architecture.md: the exception {rel} {name} is no longer over {limit} lines (or gone); remove it")
    if bad or stale:
        print(f"{len(bad)} function(s) over {limit} lines that docs/architecture.md does not state as exceptions")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
