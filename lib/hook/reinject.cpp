#include "hook/reinject.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include "forensics/compactions.hpp"
#include "model/identifiers.hpp"
#include "model/node.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

constexpr std::size_t kShownBytes = 120;
constexpr std::size_t kPatternBytes = 60;

int kind_rank(const std::string& k) {
  static const char* order[] = {ident::kPath, ident::kCommand, ident::kError, ident::kUrl, ident::kToolCall, ident::kNumber};
  for (int i = 0; i < 6; ++i)
    if (k == order[i]) return i;
  return 6;
}

/// The items taken one of each kind in turn (paths, commands, errors, URLs, tool-call ids,
/// numbers), first seen first within a kind: a bound that cuts the list still shows every kind.
std::vector<DroppedItem> interleave(std::vector<DroppedItem> items) {
  std::vector<std::vector<DroppedItem>> by_kind(7);
  for (DroppedItem& d : items) by_kind[static_cast<std::size_t>(kind_rank(d.kind))].push_back(std::move(d));
  std::vector<DroppedItem> out;
  for (std::size_t round = 0; out.size() < items.size(); ++round)
    for (auto& k : by_kind)
      if (round < k.size()) out.push_back(std::move(k[round]));
  return out;
}

/// The identifiers of HEAD's spine newer than `stop` (the newest compaction: its boundary or a
/// covered node), first seen first; `assistant_turns` counts the assistant messages met.
std::vector<DroppedItem> spine_identifiers(Store& store, const std::string& session,
                                           const std::set<std::string>& stop, std::int64_t& assistant_turns) {
  std::vector<DroppedItem> items;
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<Node> spine;
  for (auto id = store.head(session); id && !stop.count(*id);) {
    auto n = store.node(*id, false);
    if (!n) break;
    id = n->predecessor;
    spine.push_back(std::move(*n));
  }
  for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
    if (it->role == role::kAssistant) ++assistant_turns;
    node_identifiers(*it, [&](const char* kind, std::string value) {
      if (seen.emplace(kind, value).second) items.push_back(DroppedItem{kind, std::move(value), it->id});
    });
  }
  return items;
}

std::string cut(const std::string& s, std::size_t max, const char* ellipsis) {
  if (s.size() <= max) return s;
  return s.substr(0, utf8_safe_prefix(s, max)) + ellipsis;
}

/// The grep arguments that find a value: the value itself when it holds no whitespace, else (as
/// identifiers have their whitespace collapsed) a regex of its words joined by `\s*`, RE2's
/// punctuation escaped. At most kPatternBytes of the value, cut on a UTF-8 boundary (and, for
/// words, at the last whole word).
std::string grep_args(const std::string& value) {
  std::string v = cut(value, kPatternBytes, "");
  if (v.find(' ') == std::string::npos) return "-- " + shell_quote(v);
  if (v.size() < value.size() && v.rfind(' ') != std::string::npos) v.erase(v.rfind(' '));
  std::string re;
  for (char c : v) {
    if (c == ' ') {
      re += "\\s*";
    } else {
      if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) re += '\\';
      re += c;
    }
  }
  return "--regex -- " + shell_quote(re);
}

/// A tool-call id is not in the searchable text: the node that holds it is shown instead.
std::string item_line(const DroppedItem& d, const std::string& prefix) {
  const std::string recall = std::string_view(d.kind) == ident::kToolCall ? "show " + shell_quote(d.node)
                                                                        : "grep " + grep_args(d.value);
  return fmt::format("- {} {}: {} {}\n", d.kind, cut(d.value, kShownBytes, "…"), prefix, recall);
}

}  // namespace

std::string shell_quote(const std::string& s) {
  const bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("_./:@%+=,-").find(static_cast<char>(c)) != std::string_view::npos;
  });
  if (safe) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Reinjected reinject_context(Store& store, const std::string& session, const ReinjectOptions& opts) {
  Reinjected r;
  std::vector<CompactionEntry> all = session_compactions(store, session);
  const CompactionEntry* newest = all.empty() ? nullptr : &all.back();
  std::set<std::string> stop;
  if (newest) {
    stop.insert(newest->covers_last);
    if (newest->boundary) stop.insert(*newest->boundary);
  }
  std::vector<DroppedItem> items;
  if (opts.just_compacted) {
    std::int64_t turns = 0;
    items = spine_identifiers(store, session, stop, turns);
    // No assistant turn since the newest archived compaction: that one is the compaction that
    // just happened (its summary was already written), and its dropped report is exact.
    if (newest && turns == 0) items.clear();
    else r.basis = "compacted";
  }
  if (r.basis == "none" && newest) {
    items = newest->dropped;
    r.basis = "dropped";
    r.summary_id = newest->summary_id;
  }
  items = interleave(std::move(items));
  r.identifiers = static_cast<std::int64_t>(items.size());
  if (items.empty()) {
    r.basis = "none";
    r.summary_id.reset();
    return r;
  }
  const std::string prefix = fmt::format("ctxfold --db {} --session {}", shell_quote(opts.db), shell_quote(session));
  std::string header =
      r.basis == "dropped"
          ? fmt::format("ctxfold archived this session in full. {}'s compaction summary left out these identifiers of "
                        "the history it replaced; to recall one, run its command (the whole history: {} expand {}).\n",
                        opts.agent, prefix, shell_quote(*r.summary_id))
          : fmt::format("ctxfold archived this session in full before {} compacted it. These identifiers were in the "
                        "history just compacted (the summary may keep some); to recall one, run its command.\n",
                        opts.agent);
  // Room is kept for the footer whenever a line may be the last to fit.
  const std::string worst_footer = fmt::format("({} more not listed.)\n", r.identifiers);
  std::string text = header;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string line = item_line(items[i], prefix);
    const std::size_t reserve = i + 1 == items.size() ? 0 : worst_footer.size();
    if (text.size() + line.size() + reserve > opts.max_bytes) break;
    text += line;
    ++r.shown;
  }
  if (r.shown < r.identifiers) text += fmt::format("({} more not listed.)\n", r.identifiers - r.shown);
  if (r.shown == 0 || text.size() > opts.max_bytes) {
    text.clear();
    r.shown = 0;
  }
  r.text = std::move(text);
  return r;
}


}  // namespace ctxfold
