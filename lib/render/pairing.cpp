#include "render/pairing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "render/blocks.hpp"

namespace ctxfold::render_detail {
namespace {

/// A summary whose metadata.replacement_history describes its blocks item by item (type, role,
/// block count; a Codex compaction's new history, docs/formats/codex.md) becomes one message per
/// item in the item's own role, so a developer or assistant message of that history is not read
/// as user text. Returns false (nothing added) for any other node or a description that does not
/// account for the blocks exactly.
bool split_replacement_history(const Node& n, std::vector<RenderedMessage>& out) {
  if (!n.is_view() || n.kind != kind::kSummary || !n.content.is_array()) return false;
  auto d = n.metadata.find("replacement_history");
  if (d == n.metadata.end() || !d->is_array() || d->empty()) return false;
  std::size_t total = 0;
  for (const auto& item : *d) {
    if (!item.is_object() || !item.contains("blocks") || !item["blocks"].is_number_unsigned()) return false;
    total += item["blocks"].get<std::size_t>();
  }
  if (total != n.content.size()) return false;
  std::size_t pos = 0;
  for (std::size_t k = 0; k < d->size(); ++k) {
    const Json& item = (*d)[k];
    std::string role = json_str(item, "role");
    RenderedMessage m{role == "developer" || role == "system" ? std::string(role::kSystem)
                      : role == "assistant"                   ? std::string(role::kAssistant)
                                                              : std::string(role::kUser),
                      kind::kSummary, {n.id}, Json::array()};
    if (json_str(item, "type") != "message") m.role = role::kUser;
    m.part = static_cast<std::int64_t>(k);
    std::size_t count = item["blocks"].get<std::size_t>();
    for (std::size_t b = 0; b < count; ++b, ++pos) {
      const Json& blk = n.content[pos];
      m.content.push_back(is_type(blk, "tool_use") || is_type(blk, "tool_result") ? text_block(block_text(blk)) : blk);
    }
    out.push_back(std::move(m));
  }
  return true;
}

using Pos = std::pair<std::size_t, std::size_t>;  // (item, block)
using Calls = std::vector<std::pair<std::string, std::string>>;  // (tool_use id, node)

/// A tool result whose call is not in the context, as a text block.
Json orphan_result_text(const Json& b, const std::string& id) {
  return text_block(fmt::format("[tool result for {}, whose call is not in this context]\n{}", id,
                                content_text(b.contains("content") ? b["content"] : Json())));
}

/// build_messages' state: the items, where each call's results are and which moved to a call.
struct Pairing {
  Rendered& r;
  std::vector<Node>& items;
  bool take;  // move each block out of its item instead of copying it (build_messages)
  std::map<std::string, std::vector<Pos>> results;  // tool_use_id -> result positions in order
  std::set<Pos> consumed;

  /// The block b of an item, moved out when take (each block is passed on at most once).
  Json pass(Json& b) const { return take ? std::move(b) : b; }

  void index_results();
  std::size_t assistant_turn(std::size_t i);
  void answer_calls(const Calls& calls, std::size_t j);
  void other_message(std::size_t i);
};

/// Records the position of every tool result outside assistant records.
void Pairing::index_results() {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (message_role(items[i]) == role::kAssistant || !items[i].content.is_array()) continue;
    for (std::size_t b = 0; b < items[i].content.size(); ++b)
      if (is_type(items[i].content[b], "tool_result")) results[json_str(items[i].content[b], "tool_use_id")].push_back({i, b});
  }
}

/// The run of assistant records from item i as one message, then the results of its calls;
/// returns the index after the run.
std::size_t Pairing::assistant_turn(std::size_t i) {
  RenderedMessage m{role::kAssistant, kind::kMessage, {}, Json::array()};
  Calls calls;
  std::size_t j = i;
  for (; j < items.size() && message_role(items[j]) == role::kAssistant; ++j) {
    m.ids.push_back(items[j].id);
    if (!items[j].content.is_array()) continue;
    for (auto& b : items[j].content) {
      if (is_type(b, "tool_use")) {
        calls.emplace_back(json_str(b, "id"), items[j].id);
        m.content.push_back(pass(b));
      } else if (is_type(b, "tool_result")) {
        // A result inside an assistant record answers nothing a provider accepts: keep as text.
        std::string id = json_str(b, "tool_use_id");
        m.content.push_back(orphan_result_text(b, id));
        r.repairs.push_back({"orphan_result_as_text", items[j].id, id});
      } else {
        m.content.push_back(pass(b));
      }
    }
  }
  r.messages.push_back(std::move(m));
  if (!calls.empty()) answer_calls(calls, j);
  return j;
}

/// The tool message answering `calls`: each call's first unconsumed result after item j, else a
/// synthetic error result.
void Pairing::answer_calls(const Calls& calls, std::size_t j) {
  RenderedMessage tg{role::kTool, "tool_results", {}, Json::array()};
  // Results go in the order they were recorded (a client sends parallel results as they
  // finished, not in call order); a call with no result gets a synthetic one after them.
  std::vector<Pos> found_results;
  Calls unanswered;
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
    tg.content.push_back(pass(items[p.first].content[p.second]));
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

/// A record other than an assistant one: its blocks less the results moved up to their calls.
void Pairing::other_message(std::size_t i) {
  Node& n = items[i];
  if (split_replacement_history(n, r.messages)) return;
  RenderedMessage m{message_role(n), n.is_view() ? kind::kSummary : kind::kMessage, {n.id}, Json::array()};
  if (n.content.is_array()) {
    for (std::size_t b = 0; b < n.content.size(); ++b) {
      if (consumed.count({i, b})) continue;  // a tool result moved up to its call (possibly taken)
      Json& blk = n.content[b];
      if (is_type(blk, "tool_result")) {
        std::string id = json_str(blk, "tool_use_id");
        m.content.push_back(orphan_result_text(blk, id));
        r.repairs.push_back({"orphan_result_as_text", n.id, id});
      } else if (is_type(blk, "tool_use")) {
        // A call outside an assistant turn cannot be a provider tool call.
        m.content.push_back(text_block(tool_use_as_text(blk)));
      } else {
        m.content.push_back(pass(blk));
      }
    }
  } else if (n.content.is_string()) {
    m.content.push_back(text_block(n.content.get<std::string>()));
  }
  // A tool record whose results all moved up to their calls leaves nothing behind; what is left
  // of one (orphans as text) is read as user text.
  if (m.role == role::kTool) m.role = role::kUser;
  if (!m.content.empty()) r.messages.push_back(std::move(m));
}

}  // namespace

void build_messages(Rendered& r, bool take) {
  Pairing p{r, r.items, take, {}, {}};
  p.index_results();
  std::size_t i = 0;
  while (i < r.items.size()) {
    if (message_role(r.items[i]) == role::kAssistant) {
      i = p.assistant_turn(i);
      continue;
    }
    p.other_message(i);
    ++i;
  }
  if (take)
    for (Node& n : r.items) n.content = Json::array();
}

}  // namespace ctxfold::render_detail
