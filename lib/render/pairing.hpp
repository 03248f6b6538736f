#pragma once
// Tool-pairing repair (private to lib/render).
#include "render/render.hpp"

namespace ctxfold::render_detail {

/// Builds r.messages (and r.repairs) from r.items; see RenderedMessage.
void build_messages(Rendered& r);

}  // namespace ctxfold::render_detail
