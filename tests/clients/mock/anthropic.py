"""Protocol module of the mock server (see server.py): Anthropic Messages.

Answers POST /v1/messages (SSE when the body says "stream": true, one JSON message otherwise),
POST /v1/messages/count_tokens (an estimate: bytes / 4), and any GET / HEAD probe under /v1/ or
/api/ (an empty JSON object), so the client never waits on a route the mock lacks.

A scenario REPLY becomes one assistant message: a thinking block (with a signature_delta) when
"thinking" is set, a text block when "text" is set, then one tool_use block per "tool_calls"
entry (its input streamed as input_json_delta pieces). stop_reason is "tool_use" when there are
tool calls, else "end_turn". "usage" overrides the reported input/output tokens (the default
input figure is the request's size / 4, so compaction triggers only when a scenario asks).
"""
import hashlib
import json

AGENT_MARKERS = ("You are Claude Code", "You are an interactive", "Claude Agent SDK",
                 "You are an agent for Claude Code")


def matches(method, path):
    """True when this module answers METHOD PATH."""
    if path.startswith("/v1/messages"):
        return True
    return method in ("GET", "HEAD") and (path.startswith("/v1/") or path.startswith("/api/"))


def _system_text(body):
    sys_ = body.get("system")
    if isinstance(sys_, str):
        return sys_
    if isinstance(sys_, list):
        return "\n".join(b.get("text", "") for b in sys_ if isinstance(b, dict))
    return ""


def is_main(body):
    """True for a main-agent request (the agent's own conversation, or a sub-agent's: it carries
    tools and the agent system prompt), False for a side request (title, topic, quota probe)."""
    if not isinstance(body, dict) or "messages" not in body:
        return False
    if not body.get("tools"):
        return False
    text = _system_text(body)
    return any(m in text for m in AGENT_MARKERS)


def _value_of_inner(block):
    t = block.get("type")
    if t == "text":
        return "text", block.get("text", "")
    if t == "image":
        return "image", (block.get("source") or {}).get("media_type", "")
    return t or "?", ""


def to_items(body):
    """The request's neutral items, in order: [{"msg", "role", "kind", "value"}] (see compare.py).

    System (string or blocks) gives role "system" items (msg -1); each message's blocks follow:
    text (value = text), thinking (value = thinking text), redacted_thinking (value = data),
    tool_use (value = id), tool_result (value = tool_use_id, then one role "tool" item per inner
    text or image block, or one text item for string content), image (value = media_type);
    any other block kind gives its type with its id (or "") as value."""
    items = []
    if not isinstance(body, dict):
        return items
    sys_ = body.get("system")
    if isinstance(sys_, str):
        items.append({"msg": -1, "role": "system", "kind": "text", "value": sys_})
    elif isinstance(sys_, list):
        for b in sys_:
            if isinstance(b, dict) and b.get("type") == "text":
                items.append({"msg": -1, "role": "system", "kind": "text", "value": b.get("text", "")})
    for n, m in enumerate(body.get("messages") or []):
        if not isinstance(m, dict):
            continue
        role = m.get("role", "?")
        content = m.get("content")
        if isinstance(content, str):
            items.append({"msg": n, "role": role, "kind": "text", "value": content})
            continue
        for b in content or []:
            if not isinstance(b, dict):
                continue
            t = b.get("type")
            if t == "text":
                items.append({"msg": n, "role": role, "kind": "text", "value": b.get("text", "")})
            elif t == "thinking":
                items.append({"msg": n, "role": role, "kind": "thinking", "value": b.get("thinking", "")})
            elif t == "redacted_thinking":
                items.append({"msg": n, "role": role, "kind": "redacted_thinking", "value": b.get("data", "")})
            elif t == "tool_use":
                items.append({"msg": n, "role": role, "kind": "tool_use", "value": b.get("id", "")})
            elif t == "tool_result":
                items.append({"msg": n, "role": "tool", "kind": "tool_result", "value": b.get("tool_use_id", "")})
                inner = b.get("content")
                if isinstance(inner, str):
                    items.append({"msg": n, "role": "tool", "kind": "text", "value": inner})
                elif isinstance(inner, list):
                    for ib in inner:
                        if isinstance(ib, dict):
                            k, v = _value_of_inner(ib)
                            items.append({"msg": n, "role": "tool", "kind": k, "value": v})
            elif t == "image":
                items.append({"msg": n, "role": role, "kind": "image",
                              "value": (b.get("source") or {}).get("media_type", "")})
            else:
                items.append({"msg": n, "role": role, "kind": t or "?", "value": b.get("id", "")})
    return items


def _tool_id(body, k):
    digest = hashlib.sha256(("%d/%d/%s" % (len(body.get("messages") or []), k,
                                           json.dumps((body.get("messages") or [])[:1], sort_keys=True)))
                            .encode()).hexdigest()
    return "toolu_mock" + digest[:16]


def _blocks(body, reply):
    blocks = []
    if reply.get("thinking"):
        sig = hashlib.sha256(reply["thinking"].encode()).hexdigest()
        blocks.append({"type": "thinking", "thinking": reply["thinking"], "signature": "mocksig_" + sig})
    if reply.get("text"):
        blocks.append({"type": "text", "text": reply["text"]})
    for k, call in enumerate(reply.get("tool_calls") or []):
        blocks.append({"type": "tool_use", "id": call.get("id") or _tool_id(body, k),
                       "name": call["name"], "input": call.get("input") or {}})
    if not blocks:
        blocks.append({"type": "text", "text": "Done."})
    return blocks


def _usage(body, reply):
    u = reply.get("usage") or {}
    est = len(json.dumps(body)) // 4
    return {"input_tokens": u.get("input_tokens", est), "output_tokens": u.get("output_tokens", 20),
            "cache_creation_input_tokens": u.get("cache_creation_input_tokens", 0),
            "cache_read_input_tokens": u.get("cache_read_input_tokens", 0)}


def _msg_id(body):
    return "msg_mock" + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:20]


def _chunks(s, n):
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


def respond(handler, method, url, body, reply):
    """Answer with the neutral REPLY in this protocol's shape (handler.send_json / start_sse / sse)."""
    if method in ("GET", "HEAD"):
        handler.send_json(200, {"data": [], "has_more": False} if "models" in url.path else {})
        return
    if not isinstance(body, dict):
        handler.send_json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                           "message": "mock: body is not JSON"}})
        return
    if url.path.rstrip("/").endswith("/count_tokens"):
        handler.send_json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
        return
    if reply.get("status") and reply["status"] >= 400:
        handler.send_json(reply["status"], {"type": "error", "error": {
            "type": "api_error", "message": reply.get("error") or "mock error"}})
        return
    model = body.get("model") or "claude-mock"
    blocks = _blocks(body, reply)
    usage = _usage(body, reply)
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    mid = _msg_id(body)
    if not body.get("stream"):
        handler.send_json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                "content": blocks, "stop_reason": stop, "stop_sequence": None,
                                "usage": usage})
        return
    handler.start_sse()
    start_usage = dict(usage)
    start_usage["output_tokens"] = 1
    handler.sse({"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}}, "message_start")
    for i, b in enumerate(blocks):
        if b["type"] == "thinking":
            handler.sse({"type": "content_block_start", "index": i,
                         "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                        "content_block_start")
            for piece in _chunks(b["thinking"], 40):
                handler.sse({"type": "content_block_delta", "index": i,
                             "delta": {"type": "thinking_delta", "thinking": piece}}, "content_block_delta")
            handler.sse({"type": "content_block_delta", "index": i,
                         "delta": {"type": "signature_delta", "signature": b["signature"]}},
                        "content_block_delta")
        elif b["type"] == "text":
            handler.sse({"type": "content_block_start", "index": i,
                         "content_block": {"type": "text", "text": ""}}, "content_block_start")
            for piece in _chunks(b["text"], 40):
                handler.sse({"type": "content_block_delta", "index": i,
                             "delta": {"type": "text_delta", "text": piece}}, "content_block_delta")
        else:
            handler.sse({"type": "content_block_start", "index": i,
                         "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}},
                        "content_block_start")
            for piece in _chunks(json.dumps(b["input"]), 30):
                handler.sse({"type": "content_block_delta", "index": i,
                             "delta": {"type": "input_json_delta", "partial_json": piece}},
                            "content_block_delta")
        handler.sse({"type": "content_block_stop", "index": i}, "content_block_stop")
    handler.sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                 "usage": {"output_tokens": usage["output_tokens"],
                           "input_tokens": usage["input_tokens"],
                           "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                           "cache_read_input_tokens": usage["cache_read_input_tokens"]}},
                "message_delta")
    handler.sse({"type": "message_stop"}, "message_stop")
