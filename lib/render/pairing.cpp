#include "render/pairing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "render/blocks.hpp"

namespace ctxfold::render_detail {


/// Builds r.messages (and r.repairs) from r.items; see RenderedMessage.
void build_messages(Rendered& r) {
  const auto& items = r.items;
  using Pos = std::pair<std::size_t, std::size_t>;  // (item, block)
  std::map<std::string, std::vector<Pos>> results;   // tool_use_id -> result positions in order
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (message_role(items[i]) == role::kAssistant || !items[i].content.is_array()) continue;
    for (std::size_t b = 0; b < items[i].content.size(); ++b)
      if (is_type(items[i].content[b], "tool_result")) results[json_str(items[i].content[b], "tool_use_id")].push_back({i, b});
  }
  std::set<Pos> consumed;

  std::size_t i = 0;
  while (i < items.size()) {
    if (message_role(items[i]) == role::kAssistant) {
      RenderedMessage m{role::kAssistant, kind::kMessage, {}, Json::array()};
      std::vector<std::pair<std::string, std::string>> calls;  // (tool_use id, node)
      std::size_t j = i;
      for (; j < items.size() && message_role(items[j]) == role::kAssistant; ++j) {
        m.ids.push_back(items[j].id);
        if (!items[j].content.is_array()) continue;
        for (const auto& b : items[j].content) {
          if (is_type(b, "tool_use")) {
            calls.emplace_back(json_str(b, "id"), items[j].id);
            m.content.push_back(b);
          } else if (is_type(b, "tool_result")) {
            // A result inside an assistant record answers nothing a provider accepts: keep as text.
            std::string id = json_str(b, "tool_use_id");
            m.content.push_back(text_block(fmt::format("[tool result for {}, whose call is not in this context]\n{}", id,
                                                       content_text(b.contains("content") ? b["content"] : Json()))));
            r.repairs.push_back({"orphan_result_as_text", items[j].id, id});
          } else {
            m.content.push_back(b);
          }
        }
      }
      r.messages.push_back(std::move(m));
      if (!calls.empty()) {
        RenderedMessage tg{role::kTool, "tool_results", {}, Json::array()};
        // Results go in the order they were recorded (a client sends parallel results as they
        // finished, not in call order); a call with no result gets a synthetic one after them.
        std::vector<Pos> found_results;
        std::vector<std::pair<std::string, std::string>> unanswered;
        for (const auto& [call_id, node] : calls) {
          std::optional<Pos> found;
          if (auto it = results.find(call_id); it != results.end())
            for (const auto& p : it->second)
              if (p.first >= j && !consumed.count(p)) {
                found = p;
                break;
              }
          if (found) {
            consumed.insert(*found);
            found_results.push_back(*found);
          } else {
            unanswered.emplace_back(call_id, node);
          }
        }
        std::sort(found_results.begin(), found_results.end());
        for (const Pos& p : found_results) {
          tg.content.push_back(items[p.first].content[p.second]);
          const std::string& src = items[p.first].id;
          if (std::find(tg.ids.begin(), tg.ids.end(), src) == tg.ids.end()) tg.ids.push_back(src);
        }
        for (const auto& [call_id, node] : unanswered) {
          tg.content.push_back(Json{{"type", "tool_result"},
                                    {"tool_use_id", call_id},
                                    {"content", kNoToolResultText},
                                    {"is_error", true}});
          r.repairs.push_back({"synthetic_result", node, call_id});
        }
        r.messages.push_back(std::move(tg));
      }
      i = j;
      continue;
    }

    const Node& n = items[i];
    RenderedMessage m{message_role(n), n.is_view() ? kind::kSummary : kind::kMessage, {n.id}, Json::array()};
    if (n.content.is_array()) {
      for (std::size_t b = 0; b < n.content.size(); ++b) {
        const Json& blk = n.content[b];
        if (is_type(blk, "tool_result")) {
          if (consumed.count({i, b})) continue;
          std::string id = json_str(blk, "tool_use_id");
          m.content.push_back(text_block(fmt::format("[tool result for {}, whose call is not in this context]\n{}", id,
                                                     content_text(blk.contains("content") ? blk["content"] : Json()))));
          r.repairs.push_back({"orphan_result_as_text", n.id, id});
        } else if (is_type(blk, "tool_use")) {
          // A call outside an assistant turn cannot be a provider tool call.
          m.content.push_back(text_block(tool_use_as_text(blk)));
        } else {
          m.content.push_back(blk);
        }
      }
    } else if (n.content.is_string()) {
      m.content.push_back(text_block(n.content.get<std::string>()));
    }
    // A tool record whose results all moved up to their calls leaves nothing behind; what is left
    // of one (orphans as text) is read as user text.
    if (m.role == role::kTool) m.role = role::kUser;
    if (!m.content.empty()) r.messages.push_back(std::move(m));
    ++i;
  }
}

}  // namespace ctxfold::render_detail
