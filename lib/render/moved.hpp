#pragma once
#include <string>

#include "render/render.hpp"
#include "store/store.hpp"

// A render that holds its content once (docs/render.md "Memory"), for verify-invariants.
namespace ctxfold {

/// render_context with each item's content blocks moved into Rendered::messages instead of
/// copied, so the render holds its content once; Rendered::items keep their ids, kinds, roles and
/// metadata with content an empty array. Everything else is the same as render_context's for the
/// same options (messages, repairs, reads, sections, estimates, token figure, warnings), and so are
/// render_to_json and render_request_body in formats openai and anthropic, which read the
/// messages; formats ctxfold, gemini, responses and text read the items and need render_context.
/// For callers that read only those (verify-invariants). Same errors as render_context.
/// tests/unit/render/item_content_test.cpp compares both on every real transcript.
Rendered render_moved(Store& store, const std::string& session, const RenderOptions& opts);

}  // namespace ctxfold
