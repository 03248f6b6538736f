#pragma once
// Tool-pairing repair (private to lib/render).
#include "render/render.hpp"

namespace ctxfold::render_detail {

/// Builds r.messages (and r.repairs) from r.items; see RenderedMessage. take: each block is moved
/// out of its item into its message instead of copied, and every item's content is left an empty
/// array (render/moved.hpp render_moved).
void build_messages(Rendered& r, bool take = false);

}  // namespace ctxfold::render_detail
