#!/usr/bin/env python3
"""Turns bench/out/measurements.jsonl (written by bench/run.sh) into results.json and a table."""
import json
import sys

MB = 1e6
TARGET_IMPORT_RATIO = 1.0      # ctxfold import MB/s / jq MB/s, at least
TARGET_RENDER_RATIO = 2.0      # render latency 10^6 / 10^3, at most
TARGET_RENDER_RSS_MB = 64.0    # render at 10^6
TARGET_IMPORT_RSS_GROWTH = 1.5 # import RSS 10^6 / 10^4: "must not grow with the file" (allowance for noise)


def main(src, dst):
    recs = [json.loads(l) for l in open(src) if l.strip()]
    env = next((r for r in recs if r["kind"] == "env"), {})
    by = {}
    for r in recs:
        if "nodes" in r:
            by.setdefault(r["nodes"], {})[r["kind"]] = r
    sizes = sorted(by)
    rows = []
    for n in sizes:
        d = by[n]
        row = {"nodes": n}
        if "skipped" in d:
            row["skipped"] = d["skipped"]["reason"]
        g = d.get("gen")
        if g:
            row["jsonl_mb"] = round(g["bytes"] / MB, 2)
            row["gen_s"] = round(g["seconds"], 3)
            st = g.get("stats", {})
            row["compact"] = st.get("compact")
            row["sidechain_nodes"] = st.get("sidechain_nodes")
        im = d.get("import")
        if im:
            row["import_exit"] = im["exit"]
            row["jq_s"] = round(im["jq_ns"] / 1e9, 4)
            row["jq_mb_s"] = round(im["bytes"] / MB / (im["jq_ns"] / 1e9), 2) if im["jq_ns"] else None
            row["jq_rss_mb"] = round(im["jq_rss_kb"] / 1024, 1)
            if im["exit"] == 0 and im["import_ns"]:
                row["import_s"] = round(im["import_ns"] / 1e9, 4)
                row["import_mb_s"] = round(im["bytes"] / MB / (im["import_ns"] / 1e9), 2)
                row["import_vs_jq"] = round(row["import_mb_s"] / row["jq_mb_s"], 3)
                if im.get("import_cpu_ns") and im.get("jq_cpu_ns"):
                    # user+sys CPU time: less sensitive to other processes on a shared machine
                    row["import_cpu_s"] = round(im["import_cpu_ns"] / 1e9, 3)
                    row["jq_cpu_s"] = round(im["jq_cpu_ns"] / 1e9, 3)
                    row["import_vs_jq_cpu"] = round(im["jq_cpu_ns"] / im["import_cpu_ns"], 3)
                row["import_rss_mb"] = round(im["import_rss_kb"] / 1024, 1)
                row["nodes_added"] = im["nodes_added"]
                row["db_mb"] = round(im["db_bytes"] / MB, 1)
            row["runs"] = im["runs"]
        rd = d.get("render")
        if rd:
            row["render_exit"] = rd["exit"]
            if rd["exit"] == 0:
                row["render_min_ms"] = round(rd["min_s"] * 1e3, 2)
                row["render_median_ms"] = round(rd["median_s"] * 1e3, 2)
                row["render_rss_mb"] = round(rd["rss_kb"] / 1024, 1)
                if rd.get("cpu_mean_s") is not None:
                    row["render_cpu_ms"] = round(rd["cpu_mean_s"] * 1e3, 2)
                row["render_method"] = rd["method"]
                row["render_facts"] = rd["facts"]
        v = d.get("verify")
        if v:
            row["verify_s"] = round(v["seconds"], 3)
            row["verify_exit"] = v["exit"]
            row["verify_ok"] = v["ok"]
            row["verify_rss_mb"] = round(v["rss_kb"] / 1024, 1)
        rows.append(row)

    def get(n, k):
        for r in rows:
            if r["nodes"] == n:
                return r.get(k)
        return None

    targets = {}
    ratios = [r["import_vs_jq"] for r in rows if r.get("import_vs_jq") is not None]
    if ratios:
        big = max((r for r in rows if r.get("import_vs_jq") is not None), key=lambda r: r["nodes"])
        targets["import_vs_jq"] = {
            "target": f">= {TARGET_IMPORT_RATIO}",
            "per_size": {str(r["nodes"]): r["import_vs_jq"] for r in rows if r.get("import_vs_jq") is not None},
            "per_size_cpu": {str(r["nodes"]): r.get("import_vs_jq_cpu") for r in rows if r.get("import_vs_jq") is not None},
            "at_largest": big["import_vs_jq"],
            "largest_nodes": big["nodes"],
            "met": min(ratios) >= TARGET_IMPORT_RATIO,
        }
    small, large = get(1000, "render_median_ms"), get(1000000, "render_median_ms")
    if small and large:
        targets["render_1e6_vs_1e3"] = {
            "target": f"<= {TARGET_RENDER_RATIO}",
            "median_ratio": round(large / small, 3),
            "min_ratio": round(get(1000000, "render_min_ms") / get(1000, "render_min_ms"), 3),
            "median_ms": {"1000": small, "1000000": large},
            "cpu_ratio": (round(get(1000000, "render_cpu_ms") / get(1000, "render_cpu_ms"), 3)
                          if get(1000, "render_cpu_ms") and get(1000000, "render_cpu_ms") else None),
            "met": large / small <= TARGET_RENDER_RATIO,
        }
    rr = get(1000000, "render_rss_mb")
    if rr is not None:
        targets["render_rss_1e6"] = {"target": f"< {TARGET_RENDER_RSS_MB} MB", "mb": rr, "met": rr < TARGET_RENDER_RSS_MB}
    rss = {str(r["nodes"]): r["import_rss_mb"] for r in rows if r.get("import_rss_mb") is not None and r["nodes"] >= 10000}
    if len(rss) >= 2:
        ks = sorted(rss, key=int)
        growth = rss[ks[-1]] / rss[ks[0]]
        targets["import_rss_growth"] = {
            "target": f"flat: RSS({ks[-1]}) / RSS({ks[0]}) <= {TARGET_IMPORT_RSS_GROWTH}",
            "mb": rss,
            "ratio": round(growth, 3),
            "met": growth <= TARGET_IMPORT_RSS_GROWTH,
        }
    total = next((r["seconds"] for r in recs if r["kind"] == "total"), None)
    out = {"schema": "ctxfold.bench/1", "env": env, "total_seconds": total, "sizes": rows, "targets": targets}
    with open(dst, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")

    def fmt(v, w):
        s = "-" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))
        return s.rjust(w)

    cols = [("nodes", 8), ("jsonl_mb", 9), ("jq_mb_s", 8), ("import_mb_s", 12), ("import_vs_jq", 13),
            ("import_vs_jq_cpu", 17), ("import_rss_mb", 14), ("render_median_ms", 17), ("render_min_ms", 14),
            ("render_cpu_ms", 14), ("render_rss_mb", 14), ("verify_s", 9)]
    print(f"ctxfold bench  {env.get('date', '')}  nproc={env.get('nproc')}  {env.get('cpu', '')}  commit {env.get('commit', '')}")
    print(" ".join(c.rjust(w) for c, w in cols))
    for r in rows:
        if "skipped" in r and len(r) == 2:
            print(f"{r['nodes']:>8} skipped: {r['skipped']}")
            continue
        print(" ".join(fmt(r.get(c), w) for c, w in cols))
    print()
    for k, t in targets.items():
        verdict = "MET" if t["met"] else "MISSED"
        detail = {kk: vv for kk, vv in t.items() if kk not in ("met",)}
        print(f"{k:<20} {verdict:<7} {json.dumps(detail)}")
    if total is not None:
        print(f"total {total}s; results in {dst}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
