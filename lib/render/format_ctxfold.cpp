#include "render/formats.hpp"

namespace ctxfold::render_detail {

Json ctxfold_messages(const Rendered& r) {
  Json out = Json::array();
  for (const auto& m : r.messages) {
    out.push_back(Json{{"id", m.ids.empty() ? Json(nullptr) : Json(m.ids.front())},
                       {"ids", m.ids},
                       {"kind", m.kind},
                       {"role", m.role},
                       {"content", m.content}});
  }
  return out;
}

}  // namespace ctxfold::render_detail
