#include "report/page.hpp"

#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/markdown.hpp"
#include "util/utf8.hpp"

namespace ctxfold::report_detail {

std::string Page::redacted(std::string_view s) const {
  return req.redactor ? req.redactor->redact(std::string(s)) : std::string(s);
}

void Page::text(std::string_view s) { append_html_escaped(out, visible_text(redacted(s))); }

void Page::markdown(std::string_view s) { out += markdown_html(redacted(s)); }

void Page::label(std::string_view s) { append_html_escaped(out, s); }

std::string_view Page::bounded(std::string_view s, bool& cut) const {
  cut = static_cast<std::int64_t>(s.size()) > req.limits.block_bytes;
  if (!cut) return s;
  return s.substr(0, utf8_safe_prefix(s, static_cast<std::size_t>(req.limits.block_bytes)));
}

void Page::cut_marker(std::string_view s, std::string_view id) {
  stats.truncated_blocks++;
  raw("<p class=\"cut\">");
  label(fmt::format("[cut: {} of {} bytes shown; the whole node: ctxfold show {}]",
                    utf8_safe_prefix(s, static_cast<std::size_t>(req.limits.block_bytes)), s.size(), id));
  raw("</p>");
}

bool Page::anchor(const std::string& anchor_id) {
  if (!anchors_.insert(anchor_id).second) return false;
  raw(" id=\"");
  label(anchor_id);
  raw("\"");
  return true;
}

bool Page::room(Budget b) const {
  return b == Budget::read ? read_used < req.limits.read_bytes : covered_used < req.limits.covered_bytes;
}

}  // namespace ctxfold::report_detail
