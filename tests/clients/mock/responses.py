"""Protocol module of the mock server (see server.py): OpenAI Responses, as Codex CLI speaks it.

Routes (any prefix before /responses or /models, e.g. /v1):
  POST .../responses          the model: always answered as SSE (Codex always streams):
                              response.created, then per output item response.output_item.added,
                              response.output_text.delta (messages) or
                              response.reasoning_summary_text.delta (reasoning),
                              response.output_item.done, and response.completed with usage
                              {input_tokens, input_tokens_details.cached_tokens, output_tokens,
                              output_tokens_details.reasoning_tokens, total_tokens}
  POST .../responses/compact  remote compaction: {"output": [the user messages, a compaction item]}
  GET  .../models             a one-model list, so a model probe never waits
  anything else under the prefix: an empty JSON object (GET) or a 404 (POST), never a hang

A neutral REPLY (server.py) becomes output items in this order: a reasoning item when "thinking"
is set (summary_text = the thinking, encrypted_content = a deterministic opaque string derived from
it), an assistant message when "text" is set, then one item per tool call: function_call
(arguments = the JSON-encoded input) or, when the call has "custom": true, custom_tool_call
(input = the "input" string exactly). Call ids are the call's "id", else "call_" + a digest of
the request's position, so retries and resumes see the same ids.
"""
import base64
import hashlib
import json

ASSISTANT_TYPES = ("reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call")
COMPACTION_MARKERS = ("CONTEXT CHECKPOINT COMPACTION", "context checkpoint compaction",
                      "Your task is to create a detailed summary", "handoff summary")


def matches(method, path):
    """True when this module answers METHOD PATH."""
    p = path.rstrip("/")
    if p.startswith("/v1beta/") or ":" in p.rsplit("/", 1)[-1]:
        return False  # the Gemini API's paths (models/M:generateContent, /v1beta/models): gemini.py's
    return p.endswith("/responses") or p.endswith("/responses/compact") or p.endswith("/models") \
        or "/models/" in p


def _texts(body):
    for it in body.get("input") or []:
        if not isinstance(it, dict) or it.get("type", "message") != "message":
            continue
        c = it.get("content")
        if isinstance(c, str):
            yield it.get("role"), c
        elif isinstance(c, list):
            for part in c:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield it.get("role"), part["text"]


def is_compaction_request(body):
    """True for Codex's local compaction: the history plus a summarization prompt as the last user
    message, answered with the summary text."""
    last_user = None
    for role, text in _texts(body):
        if role == "user":
            last_user = text
    return last_user is not None and any(m in last_user for m in COMPACTION_MARKERS)


def is_main(body):
    """True for a main-agent request (scripted by the scenario), False for a side request.

    A main request is a model turn of the agent: it carries the agent's tools. Side requests are
    Codex's compaction summarization (the history plus the compaction prompt) and anything
    without tools (titles, probes)."""
    if not isinstance(body, dict) or "input" not in body:
        return False
    if is_compaction_request(body):
        return False
    return bool(body.get("tools"))


def _digest(s):
    return hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def to_items(body):
    """The request's neutral items, in order: [{"msg", "role", "kind", "value"}] (see compare.py).

    `instructions` first (msg 0, role system), then each input item (msg 1..): a message gives one
    item per content part (input_text/output_text → text, input_image → image with a digest of
    its URL); function_call / custom_tool_call → tool_use (value = call_id); their outputs →
    tool_result (role tool, value = call_id); reasoning → value = encrypted_content, else the
    summary text; compaction → value = encrypted_content; anything else → kind = its type."""
    items = []
    if not isinstance(body, dict):
        return items
    msg = 0
    instr = body.get("instructions")
    if isinstance(instr, str) and instr:
        items.append({"msg": msg, "role": "system", "kind": "text", "value": instr})
    prev_assistant = False
    for it in body.get("input") or []:
        # One model response is several input items (reasoning, message, calls): they share a msg
        # index, so server.py's choose_reply counts assistant turns, not items.
        assistant_side = isinstance(it, dict) and (
            it.get("role") == "assistant" or it.get("type") in ASSISTANT_TYPES)
        if not (assistant_side and prev_assistant):
            msg += 1
        prev_assistant = assistant_side
        if isinstance(it, str):
            items.append({"msg": msg, "role": "user", "kind": "text", "value": it})
            continue
        if not isinstance(it, dict):
            continue
        t = it.get("type", "message")
        if t == "message":
            role = it.get("role") or "user"
            c = it.get("content")
            if isinstance(c, str):
                items.append({"msg": msg, "role": role, "kind": "text", "value": c})
                continue
            for part in c or []:
                pt = part.get("type") if isinstance(part, dict) else None
                if pt in ("input_text", "output_text", "text", "summary_text"):
                    items.append({"msg": msg, "role": role, "kind": "text", "value": part.get("text", "")})
                elif pt == "input_image":
                    url = part.get("image_url") or part.get("file_id") or ""
                    items.append({"msg": msg, "role": role, "kind": "image", "value": "image:" + _digest(url)})
                elif pt == "refusal":
                    items.append({"msg": msg, "role": role, "kind": "text", "value": part.get("refusal", "")})
                else:
                    items.append({"msg": msg, "role": role, "kind": str(pt), "value": json.dumps(part, sort_keys=True)[:200]})
        elif t in ("function_call", "custom_tool_call", "local_shell_call"):
            items.append({"msg": msg, "role": "assistant", "kind": "tool_use", "value": it.get("call_id") or it.get("id")})
        elif t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            items.append({"msg": msg, "role": "tool", "kind": "tool_result", "value": it.get("call_id")})
        elif t == "reasoning":
            v = it.get("encrypted_content")
            if not v:
                v = "\n\n".join(s.get("text", "") for s in it.get("summary") or [] if isinstance(s, dict))
            items.append({"msg": msg, "role": "assistant", "kind": "reasoning", "value": v})
        elif t in ("compaction", "compaction_summary"):
            items.append({"msg": msg, "role": "assistant", "kind": "compaction", "value": it.get("encrypted_content")})
        else:
            items.append({"msg": msg, "role": "assistant", "kind": t, "value": it.get("call_id") or it.get("id") or ""})
    return items


def _usage(body, reply):
    u = reply.get("usage") or {}
    inp = u.get("input_tokens")
    if inp is None:
        inp = max(1, len(json.dumps(body.get("input") or [])) // 4)
    out = u.get("output_tokens", 20)
    return {"input_tokens": inp,
            "input_tokens_details": {"cached_tokens": u.get("cached_tokens", 0)},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": u.get("reasoning_tokens", 10 if reply.get("thinking") else 0)},
            "total_tokens": inp + out}


def request_seed(body):
    """The digest the response to BODY names its ids after (resp_SEED, msg_SEED, fc_SEED_N, ...)."""
    return _digest(json.dumps(body.get("input") or [], sort_keys=True, ensure_ascii=False))


def output_items(body, reply):
    """REPLY → the response's output items (see the module docstring)."""
    seed = request_seed(body)
    out = []
    if reply.get("thinking"):
        th = reply["thinking"]
        enc = "gAAAA" + base64.b64encode(("mock-reasoning:" + _digest(th) + ":" + th).encode()).decode()
        out.append({"type": "reasoning", "id": "rs_" + seed,
                    "summary": [{"type": "summary_text", "text": th}],
                    "encrypted_content": enc})
    if reply.get("text") is not None and (reply.get("text") or not reply.get("tool_calls")):
        out.append({"type": "message", "id": "msg_" + seed, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": reply.get("text") or "", "annotations": []}]})
    for n, call in enumerate(reply.get("tool_calls") or []):
        cid = call.get("id") or "call_%s_%d" % (seed, n)
        if call.get("custom"):
            out.append({"type": "custom_tool_call", "id": "ctc_%s_%d" % (seed, n), "status": "completed",
                        "call_id": cid, "name": call["name"], "input": call.get("input", "")})
        else:
            out.append({"type": "function_call", "id": "fc_%s_%d" % (seed, n), "status": "completed",
                        "call_id": cid, "name": call["name"],
                        "arguments": json.dumps(call.get("input") or {})})
    return out, seed


def respond(handler, method, url, body, reply):
    """Answer with the neutral REPLY in this protocol's shape (handler.send_json / start_sse / sse)."""
    path = url.path.rstrip("/")
    if path.endswith("/models") or "/models/" in path:
        handler.send_json(200, {"object": "list", "data": [{"id": "mock-model", "object": "model",
                                                             "owned_by": "mock"}], "models": []})
        return
    if method != "POST" or not isinstance(body, dict):
        handler.send_json(404, {"error": {"message": "mock: no route for " + url.path}})
        return
    if path.endswith("/responses/compact"):
        kept = [it for it in body.get("input") or []
                if isinstance(it, dict) and it.get("type", "message") == "message" and it.get("role") == "user"]
        enc = "gAAAA" + base64.b64encode(b"mock-compaction:" + _digest(json.dumps(body.get("input"))).encode()).decode()
        handler.send_json(200, {"output": kept + [{"type": "compaction", "encrypted_content": enc}]})
        return
    if reply.get("status") and reply["status"] != 200:
        handler.send_json(reply["status"], {"error": {"message": reply.get("error") or "mock error",
                                                      "type": "server_error"}})
        return
    items, seed = output_items(body, reply)
    rid = "resp_" + seed
    model = body.get("model") or "mock-model"
    base = {"id": rid, "object": "response", "model": model, "created_at": 1700000000}
    handler.start_sse()
    handler.sse({"type": "response.created", "response": dict(base, status="in_progress", output=[])},
                event="response.created")
    for idx, item in enumerate(items):
        added = dict(item)
        if item["type"] == "message":
            added["content"] = []
        handler.sse({"type": "response.output_item.added", "output_index": idx, "item": added},
                    event="response.output_item.added")
        if item["type"] == "message":
            text = item["content"][0]["text"]
            for c in range(0, len(text), 40) or [0]:
                handler.sse({"type": "response.output_text.delta", "item_id": item["id"], "output_index": idx,
                             "content_index": 0, "delta": text[c:c + 40]}, event="response.output_text.delta")
        elif item["type"] == "reasoning":
            handler.sse({"type": "response.reasoning_summary_part.added", "item_id": item["id"],
                         "output_index": idx, "summary_index": 0, "part": {"type": "summary_text", "text": ""}},
                        event="response.reasoning_summary_part.added")
            handler.sse({"type": "response.reasoning_summary_text.delta", "item_id": item["id"],
                         "output_index": idx, "summary_index": 0, "delta": item["summary"][0]["text"]},
                        event="response.reasoning_summary_text.delta")
        handler.sse({"type": "response.output_item.done", "output_index": idx, "item": item},
                    event="response.output_item.done")
    handler.sse({"type": "response.completed",
                 "response": dict(base, status="completed", output=items, usage=_usage(body, reply))},
                event="response.completed")
