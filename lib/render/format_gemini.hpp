// The Gemini API request encoder of a render (docs/formats/gemini.md, "Render").
#pragma once

#include "render/render.hpp"
#include "util/json.hpp"

namespace ctxfold::render_detail {

/// The Gemini generateContent request body of a render, as Gemini CLI sends it:
/// {"systemInstruction": {"parts": [{"text"}...]} (only when the context has system items),
///  "contents": [{"role": "user" | "model", "parts": [...]}...]}.
/// Built from Rendered::items (request order, before the tool-pairing repair: Gemini CLI may send
/// the same functionResponse more than once, and the render keeps what was recorded). Blocks:
/// text → {text}; image → {inlineData{mimeType, data}} (a ref → {fileData{mimeType, fileUri}});
/// tool_use → {functionCall{id, name, args}}; tool_result → {functionResponse{id, name,
/// response: {output} or {error}}}; opaque{provider:"gemini"} → its data; thinking is left out
/// (the CLI never sends thoughts back); other opaque blocks are left out. A call id the CLI
/// stores as "<name>__<id>" is sent as "<id>" (the CLI strips that prefix on the wire). Empty
/// text parts are dropped, and consecutive contents of one role are merged, as the CLI does. An
/// imported Gemini summary (metadata.gemini_messages) is split back into the messages it stands
/// for; blocks the renderer appended to it (a rolling recap) are not part of them and are left
/// out, since Gemini never sent them.
Json gemini_request_body(const Rendered& r);

}  // namespace ctxfold::render_detail
