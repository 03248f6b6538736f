#include "render/recap.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/quoted_id.hpp"
#include "tokens/estimate.hpp"
#include "util/json.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

namespace {

bool is_noise(std::string_view text) {
  std::size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return true;
  std::string_view t = text.substr(b);
  return t.rfind("<command-name>", 0) == 0 || t.rfind("<command-message>", 0) == 0 ||
         t.rfind("<local-command-stdout>", 0) == 0 || t.rfind("<local-command-stderr>", 0) == 0 ||
         t.rfind("Caveat: The messages below", 0) == 0;
}

}  // namespace

std::string user_prompt_text(const Node& n) {
  if (!is_user_turn(n) || n.kind != kind::kMessage) return {};
  if (auto m = n.metadata.find("is_meta"); m != n.metadata.end() && m->is_boolean() && m->get<bool>()) return {};
  std::string out;
  if (n.content.is_string()) {
    out = n.content.get<std::string>();
  } else if (n.content.is_array()) {
    for (const auto& b : n.content)
      if (b.is_object() && json_str(b, "type") == "text") {
        if (!out.empty()) out += "\n";
        out += json_str(b, "text");
      }
  }
  if (is_noise(out)) return {};
  return out;
}

bool is_recap_node(const Node& n) { return json_str(n.metadata, "view") == "recap"; }

std::optional<Recap> rolling_recap(Store& store, const Node& summary, const RecapOptions& opts) {
  // A summary that is the client's whole replacement history (a Codex compaction,
  // docs/formats/codex.md) already holds the user messages the client kept: a recap would add
  // text the model never read.
  if (summary.metadata.contains("replacement_history")) return std::nullopt;
  // An imported summary the agent sent as written (metadata.recap false) is quoted without a recap.
  if (auto off = summary.metadata.find("recap"); off != summary.metadata.end() && off->is_boolean() && !off->get<bool>())
    return std::nullopt;
  std::vector<Node> picked;  // newest first
  auto it = summary.metadata.find("recap_ids");
  if (it != summary.metadata.end() && it->is_array()) {
    for (auto r = it->rbegin(); r != it->rend() && static_cast<int>(picked.size()) < opts.max_messages; ++r) {
      if (!r->is_string()) continue;
      auto n = store.node(r->get<std::string>(), false);
      if (n && !user_prompt_text(*n).empty()) picked.push_back(std::move(*n));
    }
  } else {
    std::vector<std::string> covers = summary.covers_ids.empty() ? store.covers_of(summary.seq) : summary.covers_ids;
    int scanned = 0;
    for (auto r = covers.rbegin(); r != covers.rend() && scanned < opts.max_scan &&
                                   static_cast<int>(picked.size()) < opts.max_messages;
         ++r, ++scanned) {
      auto n = store.node(*r, false);
      if (n && !user_prompt_text(*n).empty()) picked.push_back(std::move(*n));
    }
  }
  // The first user message the summary covers (the session's task statement when the summary
  // starts at the root) is always quoted (docs/strategies.md "rolling": the first user message is kept):
  // read from the first covered rows in order, a bounded lookup.
  std::optional<Node> first;
  {
    auto st = store.db().prepare("SELECT node_id FROM covers WHERE summary_seq=?1 ORDER BY pos LIMIT ?2");
    st.bind(1, summary.seq).bind(2, static_cast<std::int64_t>(opts.max_scan));
    while (st.step()) {
      auto n = store.node(st.text(0), false);
      if (n && !user_prompt_text(*n).empty()) {
        first = std::move(n);
        break;
      }
    }
  }
  if (first)
    for (std::size_t i = 0; i < picked.size(); ++i)
      if (picked[i].id == first->id) {
        picked.erase(picked.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
  if (picked.empty() && !first) return std::nullopt;
  auto cut = [](std::string text, std::int64_t budget) {
    if (estimate_text_tokens(text) > budget)
      text = text.substr(0, utf8_safe_prefix(text, static_cast<std::size_t>(budget) * 4 > 8 ? budget * 4 - 8 : 0)) +
             " […]";
    return text;
  };
  // The first message takes at most half the budget; then the recent ones, newest first, within
  // what is left; a message larger than what is left is shortened.
  std::int64_t budget = opts.max_tokens;
  // The text names each message by its quoted id (the source's in a fork); quoted_ids are the
  // storage ids the render read.
  struct Quote {
    std::string id, shown, text;
  };
  std::optional<Quote> first_quote;
  if (first) {
    std::string text = cut(user_prompt_text(*first), picked.empty() ? budget : budget / 2);
    budget -= estimate_text_tokens(text);
    first_quote = Quote{first->id, quoted_id(*first), std::move(text)};
  }
  std::vector<Quote> quotes;  // newest first
  for (const auto& n : picked) {
    if (budget <= 0) break;
    std::string text = cut(user_prompt_text(n), budget);
    budget -= estimate_text_tokens(text);
    quotes.push_back(Quote{n.id, quoted_id(n), std::move(text)});
  }
  if (first_quote) quotes.push_back(std::move(*first_quote));
  std::reverse(quotes.begin(), quotes.end());
  std::string body = first ? "The first and the most recent user messages from the compacted part of the "
                             "conversation, quoted verbatim (oldest first):"
                           : "Recent user messages from the compacted part of the conversation, quoted "
                             "verbatim (oldest first):";
  Recap rc;
  for (const auto& q : quotes) {
    body += fmt::format("\n\n<user-message id=\"{}\">\n{}\n</user-message>", q.shown, q.text);
    rc.quoted_ids.push_back(q.id);
  }
  rc.node.id = summary.id + "#recap";
  rc.node.session = summary.session;
  rc.node.kind = kind::kMessage;
  rc.node.role = role::kUser;
  rc.node.predecessor = summary.id;
  rc.node.content = Json::array({Json{{"type", "text"}, {"text", body}}});
  rc.node.metadata = Json{{"view", "recap"}, {"summary", summary.id}, {"quotes", rc.quoted_ids}};
  rc.node.tokens = estimate_node_tokens(rc.node);
  rc.estimated_tokens = rc.node.tokens;
  return rc;
}

}  // namespace ctxfold
