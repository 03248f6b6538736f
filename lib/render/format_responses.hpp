#pragma once
// The OpenAI Responses encoder (`render --format responses`, private to lib/render): the request's
// "input" items and "instructions", in Codex CLI's own wire shapes (docs/formats/codex.md).
#include "render/render.hpp"

namespace ctxfold::render_detail {

/// The Responses request body for R: {"instructions"?: TEXT, "input": [ITEM...]}.
///
/// Items, in request order (Rendered::messages, after tool-pairing repair):
///  - a user / system / developer node: one `message` {type, id?, role, content:[input_text |
///    input_image]}; the role is the node's metadata.codex_role when that is "developer" or
///    "system" (so a developer message stays one), else the node's role (a system node without
///    one is "developer", the role the Responses API gives harness instructions);
///  - an assistant turn: its blocks in order, grouped as the transcript recorded them
///    (metadata.codex_items, one entry per item: a `message` of output_text parts, `reasoning`
///    (the stored item verbatim, encrypted_content and summary included; a thinking block becomes
///    a reasoning item with its text as summary_text), `function_call` {name, arguments: the
///    recorded string when metadata kept it, else the input as JSON, call_id}, `custom_tool_call`
///    {name, input: the freeform text exactly as sent, call_id}, `local_shell_call`, and any other
///    stored OpenAI item verbatim); without that metadata text runs become one message each;
///  - each tool result: `function_call_output` / `custom_tool_call_output` (after its call's
///    type) {call_id, output: the text, or input_text / input_image parts when the result had
///    images};
///  - a summary imported from Codex (metadata.replacement_history, split one message per item by
///    the tool-pairing pass, RenderedMessage::part): the replacement history's items again
///    (messages with their roles and ids, the opaque `compaction` item verbatim); any other
///    summary: one user message with its text.
/// Thinking or opaque blocks of other providers are not sent. The first system run's text goes
/// to "instructions" unless the node says Codex sent it as a developer message
/// (metadata.codex_delivery "developer_message"), in which case it stays the first input item.
/// Deterministic: identical state gives identical bytes.
Json responses_body(const Rendered& r);

}  // namespace ctxfold::render_detail
