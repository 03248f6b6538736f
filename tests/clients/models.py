#!/usr/bin/env python3
"""The model catalog (share/models/catalog.json) against the models the pinned clients know.

Each client ships its own table of the models it offers, with their context windows:
  - Claude Code: the model table in its native binary (id, provider_ids.first_party,
    context.window, max_output_tokens.upper, image_limits);
  - Codex CLI: the bundled model catalog JSON in its binary ({"models": [{slug, context_window,
    input_modalities, ...}]});
  - Gemini CLI: VALID_GEMINI_MODELS and tokenLimit() in its bundle (packages/core config/models.ts
    and core/tokenLimits.ts).
These are the windows the clients themselves compact against, so they are the facts the catalog
records. `--check` (the default) exits 1 and lists every model a client knows that the catalog
lacks or describes differently: after a client bump, the catalog is stale until `--write` merges
the clients' facts in (entries of models the clients do not list are kept as they are).
Exits 77 when the clients are not installed (npm install --no-save in tests/clients).
"""
import argparse
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CATALOG = ROOT / "share" / "models" / "catalog.json"
NM = HERE / "node_modules"

# Image limits by provider, from each provider's vision documentation (the catalog's "sources").
PROVIDER_IMAGE = {
    "anthropic": {"max_edge": 1568, "max_pixels": 1150000, "max_images": 100},
    "openai": {"max_edge": 2048, "short_edge": 768},
    "google": {"max_edge": 768},
}
# Anthropic 'Vision': an image costs about width * height / 750 tokens.
ANTHROPIC_PIXELS_PER_TOKEN = 750


def version(pkg):
    return json.loads((NM / pkg / "package.json").read_text())["version"]


def number(s):
    return int(float(s))


def claude_models():
    path = NM / "@anthropic-ai/claude-code-linux-x64/claude"
    text = path.read_bytes().decode("latin-1")
    found = {}
    for m in re.finditer(r'\{id:"(claude-[a-z0-9-]+)",', text):
        seg = text[m.end():m.end() + 4000]
        nxt = seg.find('{id:"claude-')
        if nxt > 0:
            seg = seg[:nxt]
        win = re.search(r'context:\{window:([0-9e.]+)(?:,maximum_window:([0-9e.]+))?', seg)
        out = re.search(r'max_output_tokens:\{default:[0-9e.]+,upper:([0-9e.]+)\}', seg)
        if not win or not out:
            continue
        e = {"id": m.group(1), "provider": "anthropic", "context_window": number(win.group(1)),
             "max_output_tokens": number(out.group(1)), "reads_images": True,
             "image": dict(PROVIDER_IMAGE["anthropic"])}
        if win.group(2):
            e["max_context_window"] = number(win.group(2))
        first = re.search(r'provider_ids:\{first_party:"([^"]+)"', seg)
        if first and first.group(1) != e["id"]:
            e["aliases"] = [first.group(1)]
        img = re.search(r'image_limits:\{maxWidth:(\d+),maxHeight:(\d+),maxImageTokens:(\d+)\}', seg)
        if img:
            e["image"]["max_edge"] = max(int(img.group(1)), int(img.group(2)))
            e["image"]["max_pixels"] = int(img.group(3)) * ANTHROPIC_PIXELS_PER_TOKEN
        found.setdefault(e["id"], e)
    return "claude-code", version("@anthropic-ai/claude-code-linux-x64"), list(found.values())


def codex_models():
    bins = sorted((NM / "@openai").glob("codex-linux-*/vendor/*/bin/codex"))
    if not bins:
        raise FileNotFoundError("codex native binary")
    text = bins[0].read_bytes().decode("latin-1")
    dec = json.JSONDecoder()
    found = {}
    for m in re.finditer(r'\{\s*"models": \[', text):
        try:
            doc, _ = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        for x in doc.get("models", []):
            slug, win = x.get("slug"), x.get("context_window")
            if not slug or not isinstance(win, int):
                continue
            images = "image" in (x.get("input_modalities") or [])
            e = {"id": slug, "provider": "openai", "context_window": win, "reads_images": images}
            if isinstance(x.get("max_context_window"), int) and x["max_context_window"] != win:
                e["max_context_window"] = x["max_context_window"]
            if images:
                e["image"] = dict(PROVIDER_IMAGE["openai"])
            found.setdefault(slug, e)
    return "codex", version("@openai/codex"), list(found.values())


def gemini_models():
    text = "".join(p.read_text(errors="replace") for p in sorted((NM / "@google/gemini-cli/bundle").glob("*.js")))
    consts = dict(re.findall(r'var ([A-Z0-9_]+_MODEL) = "([a-z0-9.-]+)";', text))
    valid = re.search(r'var VALID_GEMINI_MODELS = /\* @__PURE__ \*/ new Set\(\[([^\]]*)\]\)', text)
    limits = re.search(r'function tokenLimit\(model\) \{(.*?)\n\}', text, re.S)
    if not valid or not limits:
        raise FileNotFoundError("gemini-cli VALID_GEMINI_MODELS / tokenLimit")
    numbers = {k: number(v) for k, v in re.findall(r'var ([A-Z0-9_]+_TOKEN_LIMIT) = ([0-9e.]+);', text)}
    # tokenLimit: `case A: case B: return N;` groups, `default: return DEFAULT_TOKEN_LIMIT`.
    window_of, pending = {}, []
    for tok in re.findall(r'case ([A-Z0-9_]+):|return ([A-Z0-9_]+|[0-9e.]+);|default:', limits.group(1)):
        if tok[0]:
            pending.append(tok[0])
        elif tok[1]:
            n = numbers.get(tok[1]) if not tok[1][0].isdigit() else number(tok[1])
            for c in pending:
                window_of[c] = n
            pending = []
    default = numbers.get("DEFAULT_TOKEN_LIMIT")
    found = {}
    for name in re.findall(r'[A-Z0-9_]+', valid.group(1)):
        mid = consts.get(name)
        if not mid or mid == "none":
            continue
        win = window_of.get(name, default)
        e = {"id": mid, "provider": "google", "context_window": win,
             "reads_images": not mid.startswith("gemma"), }
        if e["reads_images"]:
            e["image"] = dict(PROVIDER_IMAGE["google"])
        found.setdefault(mid, e)
    return "gemini-cli", version("@google/gemini-cli"), list(found.values())


FACTS = ("provider", "context_window", "max_context_window", "max_output_tokens", "reads_images", "aliases")


def merged(catalog, clients):
    out = json.loads(json.dumps(catalog))
    out["clients"] = {name: ver for name, ver, _ in clients}
    by_id = {e["id"]: e for e in out["models"]}
    for name, _, models in clients:
        for m in models:
            e = by_id.get(m["id"])
            if e is None:
                e = {"id": m["id"]}
                out["models"].append(e)
                by_id[m["id"]] = e
            for k in FACTS:
                if k in m:
                    e[k] = m[k]
            # A model's own image limits (Claude Code's image_limits) replace the catalog's; the
            # provider-wide ones only fill an entry that has none.
            if "image" in m and ("image" not in e or m["image"] != PROVIDER_IMAGE.get(m["provider"])):
                e["image"] = m["image"]
            e["source"] = name
    return out


def diff(old, new):
    lines = []
    if old.get("clients") != new.get("clients"):
        lines.append(f"clients: catalog is as of {old.get('clients')}, installed are {new['clients']}")
    before = {e["id"]: e for e in old["models"]}
    for e in new["models"]:
        o = before.get(e["id"])
        if o is None:
            lines.append(f"{e['id']}: {e.get('source')} knows it (window {e.get('context_window')}), the catalog does not")
        elif o != e:
            keys = sorted(k for k in set(o) | set(e) if o.get(k) != e.get(k))
            lines.append(f"{e['id']}: " + ", ".join(f"{k} {o.get(k)!r} -> {e.get(k)!r}" for k in keys))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="merge the clients' models into the catalog")
    args = ap.parse_args()
    try:
        clients = [claude_models(), codex_models(), gemini_models()]
    except FileNotFoundError as e:
        print(f"models.py: the pinned clients are not installed ({e}); run npm install --no-save in tests/clients", file=sys.stderr)
        return 77
    for name, ver, models in clients:
        if not models:
            print(f"models.py: found no model table in {name} {ver}: its format changed; update models.py",
                  file=sys.stderr)
            return 1
        print(f"{name} {ver}: {len(models)} models", file=sys.stderr)
    old = json.loads(CATALOG.read_text())
    new = merged(old, clients)
    lines = diff(old, new)
    if args.write:
        CATALOG.write_text(json.dumps(new, indent=2, ensure_ascii=False) + "\n")
        print(f"models.py: {len(lines)} change(s) written to {CATALOG.relative_to(ROOT)}", file=sys.stderr)
        return 0
    if lines:
        print("models.py: share/models/catalog.json is stale against the pinned clients "
              "(python3 tests/clients/models.py --write updates it):", file=sys.stderr)
        for line in lines:
            print("  " + line, file=sys.stderr)
        return 1
    print("models.py: the catalog knows every model of the pinned clients", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
