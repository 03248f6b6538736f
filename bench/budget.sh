#!/usr/bin/env bash
# Issue 11 benchmark: request-local budgeting (docs/strategies.md "Request-local budgets") of
# one runaway turn — a user message followed by 400 tool steps — down to a 100k-token budget with
# the extractive summarizer: time, summary calls against the 32-call cap, tokens before/after, and
# the time against a plain `render` of the same state measured in the same run (ratio). The
# database's bytes are checked unchanged (the budget is a read-only projection).
# Usage: bench/budget.sh [--steps 400] [--budget 100000] [--runs 3] [--build DIR] [--work DIR] [--keep]
# Needs jq, python3, sha256sum. Writes one JSON object (schema ctxfold.bench-budget/1) to stdout.
set -euo pipefail
steps=400; budget=100000; runs=3
bench_opt() { case "$1" in --steps) steps=$2 ;; --budget) budget=$2 ;; *) return 1 ;; esac; }
. "$(dirname "$0")/lib.sh"
bench_init bench/budget.sh "$@"
bench_build ctxfold
bench_workdir
# The runaway turn: build/test/grep steps whose outputs vary (paths, line numbers, errors), about
# 1-4 KB each, as an agent loop that never returns to the user produces them.
python3 - "$steps" >"$work/turn.jsonl" <<'PY'
import json, random, sys
steps = int(sys.argv[1]); rnd = random.Random(11)
def out(i):
    kind = i % 4
    lines = []
    for k in range(rnd.randint(15, 60)):
        f = f"src/module{rnd.randint(1,40)}/file{rnd.randint(1,200)}.cpp"
        if kind == 0: lines.append(f"[{k+1:3}/{60}] Building CXX object {f}.o")
        elif kind == 1: lines.append(f"{f}:{rnd.randint(1,900)}:{rnd.randint(1,80)}: warning: unused variable 'tmp{rnd.randint(1,99)}' [-Wunused-variable]")
        elif kind == 2: lines.append(f"{f}:{rnd.randint(1,900)}:    auto value{k} = compute_{rnd.choice(['total','delta','ratio'])}(input, {rnd.randint(0,9)});")
        else: lines.append(f"test_{rnd.randint(1,300)} ... {'ok' if rnd.random() < 0.9 else 'FAILED: expected 3, got 4'} ({rnd.randint(1,900)} ms)")
    return "\n".join(lines)
print(json.dumps({"id": "bench-sys", "role": "system", "content": "You are a coding agent. Fix the build."}))
print(json.dumps({"id": "bench-u1", "role": "user", "content": "The build is broken on main: fix it and make the tests pass."}))
cmds = ["make -j8", "make -j8 2>&1 | grep warning", "grep -rn compute_ src/", "ctest --output-on-failure"]
for i in range(steps):
    print(json.dumps({"id": f"bench-a{i}", "role": "assistant", "content": [
        {"type": "text", "text": f"Step {i}: checking again."},
        {"type": "tool_use", "id": f"bench-c{i}", "name": "Bash", "input": {"command": cmds[i % 4]}}]}))
    print(json.dumps({"id": f"bench-r{i}", "role": "tool", "content": [
        {"type": "tool_result", "tool_use_id": f"bench-c{i}", "content": out(i), "is_error": i % 4 == 3 and i % 8 == 7}]}))
PY
db="$work/b.db"; rm -f "$db"*
"$BIN" --db "$db" --session runaway append <"$work/turn.jsonl" >/dev/null
S=runaway
before_sha=$(sha256sum "$db" | cut -d' ' -f1)
"$BIN" --db "$db" --session "$S" render --format anthropic --budget "$budget" >"$work/b.json" 2>"$work/b.err"
after_sha=$(sha256sum "$db" | cut -d' ' -f1)
render=$(best_of "$BIN" --db "$db" --session "$S" render --format anthropic 2>/dev/null)
budgeted=$(best_of "$BIN" --db "$db" --session "$S" render --format anthropic --budget "$budget" 2>/dev/null)
prepared=$(best_of "$BIN" --db "$db" --session "$S" prepare --format anthropic --budget "$budget" 2>/dev/null)
python3 - "$steps" "$budget" "$render" "$budgeted" "$prepared" "$work/b.json" "$before_sha" "$after_sha" <<'PY'
import json, sys
steps, budget = int(sys.argv[1]), int(sys.argv[2])
render, budgeted, prepared = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
b = json.load(open(sys.argv[6]))["budget"]
print(json.dumps({"schema": "ctxfold.bench-budget/1", "steps": steps, "budget": budget,
                  "tokens_before": b["tokens_before"], "tokens_after": b["tokens_after"],
                  "input_budget": b["input_budget"], "output_cap": b["output_cap"],
                  "calls": b["calls"], "max_calls": b["max_calls"], "cache_hits": b["cache_hits"],
                  "results_summarized": len(b["results_summarized"]), "checkpoints": len(b["checkpoints"]),
                  "checkpoint_messages": sum(c["messages"] for c in b["checkpoints"]),
                  "render_s": round(render, 4), "render_budget_s": round(budgeted, 4),
                  "prepare_budget_s": round(prepared, 4), "ratio": round(budgeted / render, 3),
                  "db_unchanged": sys.argv[7] == sys.argv[8]}))
PY
