#!/usr/bin/env python3
# A Claude Code session of 1,200 turns whose prompts carry 32 KB of text each (38 MB of content),
# each turn an Edit call, its result and a reply, with measured usage growing: the history the
# memory tests (memory_tokens.sh, memory_verify.sh) bound their commands on.
# usage: big_prompts.py OUT.jsonl SEED SESSION_ID
import json, random, sys
random.seed(int(sys.argv[2]))
out = open(sys.argv[1], "w")
base = {"isSidechain": False, "userType": "external", "cwd": "/tmp/proj", "sessionId": sys.argv[3],
        "version": "2.1.15", "gitBranch": ""}
prev = None
def line(kind, uuid, message, **extra):
    global prev
    rec = dict(base, parentUuid=prev, type=kind, message=message, uuid=uuid,
               timestamp="2026-01-01T00:00:00.000Z", **extra)
    out.write(json.dumps(rec) + "\n")
    prev = uuid
vocab = ["alpha", "beta", "gamma", "delta", "render", "spine", "node", "summary", "fold", "tail", "x1", "y22"]
measured = 1000
for i in range(1200):
    text = " ".join(random.choice(vocab) for _ in range(5400))  # ~32 KB
    line("user", "u-%d" % i, {"role": "user", "content": "prompt %d: %s" % (i, text)})
    measured += 9000
    usage = {"input_tokens": 3, "cache_read_input_tokens": measured, "output_tokens": 20}
    line("assistant", "a-%d" % i, {"model": "claude-sonnet-4-5-20250929", "id": "msg_a%d" % i, "type": "message",
         "role": "assistant", "stop_reason": "tool_use", "usage": usage,
         "content": [{"type": "tool_use", "id": "toolu_%d" % i, "name": "Edit",
                      "input": {"file_path": "/tmp/proj/f%d.txt" % i, "old_string": "a", "new_string": "b"}}]},
         requestId="req_a%d" % i)
    line("user", "r-%d" % i, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_%d" % i,
         "content": "The file /tmp/proj/f%d.txt has been updated." % i}]}, sourceToolAssistantUUID="a-%d" % i)
    measured += 60
    usage = dict(usage, cache_read_input_tokens=measured)
    line("assistant", "b-%d" % i, {"model": "claude-sonnet-4-5-20250929", "id": "msg_b%d" % i, "type": "message",
         "role": "assistant", "stop_reason": "end_turn", "usage": usage,
         "content": [{"type": "text", "text": "Edited f%d.txt." % i}]}, requestId="req_b%d" % i)
