#include <fmt/format.h>

#include <algorithm>

#include "model/quoted_id.hpp"
#include "render/blocks.hpp"
#include "render/render.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

using render_detail::is_type;
using render_detail::text_bytes;


/// Cuts the row's text strings, in order, to `budget` bytes in all (at a UTF-8 boundary); the
/// string where the budget runs out ends with `marker`, later ones become empty.
void cap_strings(Json& content, std::int64_t& budget, const std::string& marker, bool& marked) {
  auto cut = [&](Json& str) {
    auto& t = str.get_ref<std::string&>();
    const auto size = static_cast<std::int64_t>(t.size());
    if (size <= budget) {
      budget -= size;
      return;
    }
    t.resize(utf8_safe_prefix(t, static_cast<std::size_t>(std::max<std::int64_t>(budget, 0))));
    budget = 0;
    if (!marked) t += marker;
    marked = true;
  };
  if (content.is_string()) {
    cut(content);
    return;
  }
  if (!content.is_array()) return;
  for (auto& b : content) {
    if (!b.is_object()) continue;
    if (is_type(b, "text") && b.contains("text") && b["text"].is_string())
      cut(b["text"]);
    else if (is_type(b, "tool_result") && b.contains("content"))
      cap_strings(b["content"], budget, marker, marked);
  }
}

}  // namespace

void cap_row(Node& n, std::int64_t max_bytes, std::vector<TruncatedRow>& out) {
  if (max_bytes <= 0) return;
  const std::int64_t total = text_bytes(n.content);
  if (total <= max_bytes) return;
  // The cut moves back to a character boundary, so the bytes kept can be fewer than max_bytes:
  // a dry run without the marker finds them, and the marker states what is really shown.
  std::int64_t kept = 0;
  {
    Json probe = n.content;
    std::int64_t budget = max_bytes;
    bool marked = false;
    cap_strings(probe, budget, std::string(), marked);
    kept = text_bytes(probe);
  }
  const std::string marker = fmt::format(
      "\n[ctxfold: row {} truncated: {} of {} bytes shown; the whole row: `ctxfold show {}`, or search it with "
      "`ctxfold grep`]",
      quoted_id(n), kept, total, quoted_id(n));
  std::int64_t budget = max_bytes;
  bool marked = false;
  cap_strings(n.content, budget, marker, marked);
  out.push_back(TruncatedRow{n.id, total, kept});
}

}  // namespace ctxfold
