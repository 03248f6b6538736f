"""Protocol module of the mock server (see server.py): the Gemini API as Gemini CLI speaks it.

Routes (anything under /v1beta or /v1, so the CLI never hangs on a probe):
  POST .../models/M:streamGenerateContent?alt=sse   SSE, one GenerateContentResponse per event
  POST .../models/M:generateContent                 one GenerateContentResponse
  POST .../models/M:countTokens                     {"totalTokens": N} (a bytes/4 estimate)
  POST .../models/M:embedContent                    a zero vector
  GET  .../models[/M]                               a model list / one model
A streamed answer is a thought part ({"text", "thought": true, "thoughtSignature"}) when the REPLY
has "thinking" (the same signature also on the first functionCall part), then the text, then one functionCall part per tool call ({name, args, id?}), the
last chunk carrying finishReason "STOP" and usageMetadata {promptTokenCount,
candidatesTokenCount, totalTokenCount} from REPLY.usage (so a scenario can make the CLI believe
its window is nearly full and compress).

Main vs side: a request is main when it carries the agent's tool declarations and is not a
compression request. Side requests are the CLI's utility calls: the next-speaker check and loop
detection (JSON answers built from their responseJsonSchema), the chat compression summarizer and
its verification pass (systemInstruction asks for a <state_snapshot>; answered with a
deterministic snapshot, because the CLI stores that text as the summary user message of the new
history, which the conformance suite then finds again in the import), session titles and the
model router. The compression calls are side, not main: they are not a turn of the agent's
conversation; what matters for conformance is the first main request after them, which carries
the compressed history.
"""
import hashlib
import json

SNAPSHOT_MARK = "<state_snapshot>"


def matches(method, path):
    """True when this module answers METHOD PATH."""
    return path.startswith("/v1beta/") or path.startswith("/v1/") or path in ("/v1beta", "/v1")


def _action(path):
    """The ':verb' of a models path ('streamGenerateContent', ...) or ''."""
    last = path.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def _sys_text(body):
    si = body.get("systemInstruction")
    if isinstance(si, str):
        return si
    if isinstance(si, dict):
        return "".join(p.get("text", "") for p in si.get("parts", []) if isinstance(p, dict))
    return ""


def is_compression(body):
    """True for the chat compression summarizer (and its verification pass)."""
    return SNAPSHOT_MARK in _sys_text(body) and "distilling chat history" in _sys_text(body)


def is_main(body):
    """True for a main-agent request (scripted by the scenario), False for a side request."""
    if not isinstance(body, dict) or is_compression(body):
        return False
    gc = body.get("generationConfig") or {}
    if gc.get("responseJsonSchema") or gc.get("responseSchema") or gc.get("responseMimeType") == "application/json":
        return False
    tools = body.get("tools") or []
    return any(isinstance(t, dict) and t.get("functionDeclarations") for t in tools)


def _part_items(msg, role, part):
    if not isinstance(part, dict):
        return [dict(msg=msg, role=role, kind="unknown", value=json.dumps(part))]
    if "functionCall" in part:
        fc = part["functionCall"] or {}
        return [dict(msg=msg, role=role, kind="tool_use", value=fc.get("id") or fc.get("name"))]
    if "functionResponse" in part:
        fr = part["functionResponse"] or {}
        return [dict(msg=msg, role=role, kind="tool_result", value=fr.get("id") or fr.get("name"))]
    if "inlineData" in part:
        return [dict(msg=msg, role=role, kind="image", value=(part["inlineData"] or {}).get("mimeType"))]
    if "fileData" in part:
        return [dict(msg=msg, role=role, kind="image", value=(part["fileData"] or {}).get("mimeType"))]
    if "text" in part:
        kind = "thinking" if part.get("thought") else "text"
        return [dict(msg=msg, role=role, kind=kind, value=part["text"])]
    if part.get("thought") and part.get("thoughtSignature"):
        return [dict(msg=msg, role=role, kind="thinking", value="")]
    return [dict(msg=msg, role=role, kind="unknown", value=json.dumps(part, sort_keys=True))]


def to_items(body):
    """The request's neutral items, in order: [{"msg", "role", "kind", "value"}] (see compare.py).

    systemInstruction parts are system items (msg -1); each contents[] entry gives one item per
    part, role user -> "user", model -> "assistant"."""
    if not isinstance(body, dict):
        return []
    out = []
    si = body.get("systemInstruction")
    if isinstance(si, str):
        out.append(dict(msg=-1, role="system", kind="text", value=si))
    elif isinstance(si, dict):
        for p in si.get("parts", []) or []:
            out.extend(_part_items(-1, "system", p))
    for i, c in enumerate(body.get("contents") or []):
        if not isinstance(c, dict):
            continue
        role = "assistant" if c.get("role") == "model" else "user"
        for p in c.get("parts") or []:
            out.extend(_part_items(i, role, p))
    return out


def _estimate(body):
    return max(1, len(json.dumps(body.get("contents", []), ensure_ascii=False)) // 4)


def _snapshot(body):
    """A deterministic <state_snapshot> naming what it summarised (its user prompts)."""
    digest = hashlib.sha256(json.dumps(body.get("contents", []), sort_keys=True).encode()).hexdigest()[:12]
    prompts = []
    for c in body.get("contents") or []:
        if isinstance(c, dict) and c.get("role") == "user":
            for p in c.get("parts") or []:
                t = p.get("text") if isinstance(p, dict) else None
                if t and "PROMPT-" in t:
                    prompts.append(t.strip()[:80])
    return ("<state_snapshot>\n<overall_goal>mock snapshot %s</overall_goal>\n<key_knowledge>%s</key_knowledge>\n"
            "</state_snapshot>" % (digest, " | ".join(prompts)))


def _from_schema(schema):
    """A small JSON value matching SCHEMA; known utility schemas get answers that end the turn."""
    if not isinstance(schema, dict):
        return {}
    t = schema.get("type")
    if isinstance(t, str):
        t = t.lower()
    if t == "object" or "properties" in schema:
        out = {}
        for name, sub in (schema.get("properties") or {}).items():
            if name == "next_speaker":
                out[name] = "user"
            elif name == "unproductive_state_confidence":
                out[name] = 0
            else:
                out[name] = _from_schema(sub)
        return out
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if t == "array":
        return []
    if t in ("number", "integer"):
        return 0
    if t == "boolean":
        return False
    return "mock"


def _side_text(body, reply):
    if is_compression(body):
        return _snapshot(body)
    gc = body.get("generationConfig") or {}
    schema = gc.get("responseJsonSchema") or gc.get("responseSchema")
    if schema:
        return json.dumps(_from_schema(schema))
    if gc.get("responseMimeType") == "application/json":
        return "{}"
    return reply.get("text") or "ok"


def _parts(reply, signature_seed):
    parts = []
    if reply.get("thinking"):
        sig = "sig-" + hashlib.sha256((signature_seed + reply["thinking"]).encode()).hexdigest()[:24]
        parts.append({"text": reply["thinking"], "thought": True, "thoughtSignature": sig})
    if reply.get("text"):
        parts.append({"text": reply["text"]})
    for k, tc in enumerate(reply.get("tool_calls") or []):
        fc = {"name": tc["name"], "args": tc.get("input") or {}}
        if tc.get("id"):
            fc["id"] = tc["id"]
        part = {"functionCall": fc}
        if k == 0 and reply.get("thinking"):
            # Gemini signs a thinking turn's first function call too; the CLI must send it back.
            part["thoughtSignature"] = parts[0]["thoughtSignature"]
        parts.append(part)
    if not parts:
        parts.append({"text": ""})
    return parts


def _usage(reply, body):
    u = reply.get("usage") or {}
    prompt = int(u.get("input_tokens", _estimate(body)))
    out = int(u.get("output_tokens", 10))
    return {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out}


def _model_of(path):
    last = path.rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def respond(handler, method, url, body, reply):
    """Answer with the neutral REPLY in this protocol's shape (handler.send_json / start_sse / sse)."""
    action = _action(url.path)
    if method in ("GET", "HEAD"):
        if url.path.rstrip("/").endswith("/models"):
            handler.send_json(200, {"models": [{"name": "models/" + m, "displayName": m, "inputTokenLimit": 1048576,
                                                "outputTokenLimit": 65536,
                                                "supportedGenerationMethods": ["generateContent", "countTokens"]}
                                               for m in ("gemini-2.5-flash", "gemini-2.5-pro")]})
        else:
            handler.send_json(200, {"name": "models/" + _model_of(url.path), "inputTokenLimit": 1048576})
        return
    if not isinstance(body, dict):
        handler.send_json(400, {"error": {"code": 400, "message": "mock: body is not JSON", "status": "INVALID_ARGUMENT"}})
        return
    if action == "countTokens":
        handler.send_json(200, {"totalTokens": _estimate(body.get("generateContentRequest") or body)})
        return
    if action in ("embedContent", "batchEmbedContents"):
        handler.send_json(200, {"embedding": {"values": [0.0] * 8}})
        return
    if action not in ("generateContent", "streamGenerateContent"):
        handler.send_json(404, {"error": {"code": 404, "message": "mock: no route for " + url.path, "status": "NOT_FOUND"}})
        return
    if reply.get("status") and int(reply["status"]) >= 400 and is_main(body):
        st = int(reply["status"])
        handler.send_json(st, {"error": {"code": st, "message": reply.get("error") or "mock error",
                                         "status": "RESOURCE_EXHAUSTED" if st == 429 else "INTERNAL"}})
        return
    if is_main(body):
        parts = _parts(reply, json.dumps(body.get("contents", []))[-200:])
        usage = _usage(reply, body)
    else:
        parts = [{"text": _side_text(body, reply)}]
        usage = {"promptTokenCount": _estimate(body), "candidatesTokenCount": 10,
                 "totalTokenCount": _estimate(body) + 10}
    model = _model_of(url.path)
    if action == "generateContent":
        handler.send_json(200, {"candidates": [{"content": {"role": "model", "parts": parts},
                                                "finishReason": "STOP", "index": 0}],
                                "usageMetadata": usage, "modelVersion": model})
        return
    handler.start_sse()
    for k, p in enumerate(parts):
        chunk = {"candidates": [{"content": {"role": "model", "parts": [p]}, "index": 0}], "modelVersion": model}
        if k == len(parts) - 1:
            chunk["candidates"][0]["finishReason"] = "STOP"
            chunk["usageMetadata"] = usage
        handler.sse(chunk)
