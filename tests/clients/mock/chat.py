"""Protocol module of the mock server (see server.py): OpenAI Chat Completions, as OpenAI-compatible
clients (Qwen Code) speak it.

Routes (any prefix before /chat/completions, e.g. /v1):
  POST .../chat/completions   with "stream": true an SSE stream of chat.completion.chunk objects
                              ending in "data: [DONE]"; otherwise one chat.completion object
A streamed answer is: a first chunk with the assistant role, the text in deltas of up to 40
characters (reasoning_content first when the REPLY has "thinking"), then each tool call as a
tool_calls delta: {index, id, type: "function", function: {name, arguments: ""}} followed by the
JSON-encoded arguments in two halves, then a chunk with finish_reason ("tool_calls" or "stop"), and,
when the request asks for it with stream_options.include_usage, a last chunk with empty choices and
usage {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details.cached_tokens}
taken from REPLY.usage (a bytes/4 estimate of the messages when absent). Call ids are the call's
"id", else "call_" + a digest of the request's messages and the call's position, so retries and
resumes see the same ids.

Main vs side: a request is main when it carries tools and is not a chat compression request (a
message asking for a <state_snapshot>, Qwen Code's compression directive, or a last message asking
for a summary of the conversation, Copilot CLI's, or for a summary of the session for continuation,
Cline's agentic compaction). Side requests (the
compression summarizer, titles, next-speaker or loop checks without tools) get the scenario's
"side" reply, except the compression summarizer, which gets a deterministic <state_snapshot> the
client stores as the summary of its new history.
"""
import hashlib
import json

SNAPSHOT_MARK = "<state_snapshot>"
MOCK_SUMMARY = "<overall_goal>mock summary "
SUMMARY_ASK = "Please create a detailed summary of the conversation so far."
CLINE_SUMMARY_ASK = "Summarize this session for continuation."


def matches(method, path):
    """True when this module answers METHOD PATH."""
    return path.rstrip("/").endswith("/chat/completions")


def _texts_of(content):
    """The text parts of a message's content (a string or a list of parts), in order."""
    if isinstance(content, str):
        return [content]
    out = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return out


def is_compression(body):
    """True for the chat compression summarizer: a message of the request asks for the snapshot
    (Qwen Code), or the last one asks for a summary of the conversation (Copilot CLI's /compact)
    or of the session (Cline's compaction)."""
    msgs = body.get("messages") or []
    last = [t for m in msgs[-1:] if isinstance(m, dict) for t in _texts_of(m.get("content"))]
    # The mock's own snapshot (_snapshot), sent back inside a later request, asks for nothing.
    return any(SNAPSHOT_MARK in t and MOCK_SUMMARY not in t
               for m in msgs[-2:] if isinstance(m, dict) for t in _texts_of(m.get("content"))) \
        or any(t.startswith(SUMMARY_ASK) or t.startswith(CLINE_SUMMARY_ASK) for t in last)


def is_main(body):
    """True for a main-agent request (scripted by the scenario), False for a side request."""
    if not isinstance(body, dict) or "messages" not in body or is_compression(body):
        return False
    return bool(body.get("tools"))


def _digest(s):
    return hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def to_items(body):
    """The request's neutral items, in order: [{"msg", "role", "kind", "value"}] (see compare.py).

    One msg index per message. Text parts → text (empty texts are left out: an empty content is
    no input); image_url parts → image with a digest of the URL; an assistant's reasoning_content
    (DeepSeek / Qwen style) → reasoning after its text; its tool_calls → tool_use (value = the call
    id) after those; a tool message → tool_result (role tool, value =
    tool_call_id); other part types → kind = the type."""
    items = []
    if not isinstance(body, dict):
        return items
    for msg, m in enumerate(body.get("messages") or []):
        if not isinstance(m, dict):
            continue
        role = m.get("role") or "user"
        if role == "tool":
            items.append({"msg": msg, "role": "tool", "kind": "tool_result", "value": m.get("tool_call_id")})
            continue
        c = m.get("content")
        parts = [{"type": "text", "text": c}] if isinstance(c, str) else (c or [])
        for part in parts:
            pt = part.get("type") if isinstance(part, dict) else None
            if pt == "text":
                if part.get("text"):
                    items.append({"msg": msg, "role": role, "kind": "text", "value": part["text"]})
            elif pt == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                items.append({"msg": msg, "role": role, "kind": "image", "value": "image:" + _digest(url)})
            else:
                items.append({"msg": msg, "role": role, "kind": str(pt),
                              "value": json.dumps(part, sort_keys=True)[:200]})
        if isinstance(m.get("reasoning_content"), str) and m["reasoning_content"]:
            items.append({"msg": msg, "role": "assistant", "kind": "reasoning", "value": m["reasoning_content"]})
        for call in m.get("tool_calls") or []:
            if isinstance(call, dict):
                items.append({"msg": msg, "role": "assistant", "kind": "tool_use", "value": call.get("id")})
    return items


def _usage(body, reply):
    u = reply.get("usage") or {}
    inp = u.get("input_tokens")
    if inp is None:
        inp = max(1, len(json.dumps(body.get("messages") or [])) // 4)
    out = u.get("output_tokens", 20)
    return {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out,
            "prompt_tokens_details": {"cached_tokens": u.get("cached_tokens", 0)}}


def _snapshot(body):
    """The compression summarizer's deterministic answer."""
    seed = _digest(json.dumps(body.get("messages") or [], sort_keys=True, ensure_ascii=False))
    return ("<analysis>mock analysis</analysis>\n" + SNAPSHOT_MARK + "\n" + MOCK_SUMMARY + seed +
            "</overall_goal>\n</state_snapshot>")


def respond(handler, method, url, body, reply):
    """Answer with the neutral REPLY in this protocol's shape (handler.send_json / start_sse / sse)."""
    if method != "POST" or not isinstance(body, dict):
        handler.send_json(404, {"error": {"message": "mock: no route for " + url.path}})
        return
    if is_compression(body):
        reply = {"text": _snapshot(body), "usage": reply.get("usage")}
    if reply.get("status") and reply["status"] != 200:
        handler.send_json(reply["status"], {"error": {"message": reply.get("error") or "mock error",
                                                      "type": "server_error"}})
        return
    seed = _digest(json.dumps(body.get("messages") or [], sort_keys=True, ensure_ascii=False))
    model = body.get("model") or "mock-model"
    calls = [{"id": c.get("id") or "call_%s_%d" % (seed, n), "name": c["name"],
              "arguments": json.dumps(c.get("input") or {})} for n, c in enumerate(reply.get("tool_calls") or [])]
    text = reply.get("text") or ""
    finish = "tool_calls" if calls else "stop"
    usage = _usage(body, reply)
    base = {"id": "chatcmpl-" + seed, "object": "chat.completion.chunk", "created": 1700000000, "model": model}
    if not body.get("stream"):
        msg = {"role": "assistant", "content": text or None}
        if reply.get("thinking"):
            msg["reasoning_content"] = reply["thinking"]
        if calls:
            msg["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
        handler.send_json(200, dict(base, object="chat.completion", usage=usage,
                                    choices=[{"index": 0, "message": msg, "finish_reason": finish}]))
        return

    def chunk(delta, finish_reason=None):
        handler.sse(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish_reason}]))
    handler.start_sse()
    chunk({"role": "assistant", "content": ""})
    th = reply.get("thinking") or ""
    for c in range(0, len(th), 40):
        chunk({"reasoning_content": th[c:c + 40]})
    for c in range(0, len(text), 40):
        chunk({"content": text[c:c + 40]})
    for n, call in enumerate(calls):
        chunk({"tool_calls": [{"index": n, "id": call["id"], "type": "function",
                               "function": {"name": call["name"], "arguments": ""}}]})
        half = len(call["arguments"]) // 2
        for piece in (call["arguments"][:half], call["arguments"][half:]):
            chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
    chunk({}, finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        handler.sse(dict(base, choices=[], usage=usage))
    handler.sse("[DONE]")
