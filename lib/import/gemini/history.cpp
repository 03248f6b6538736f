// The Gemini CLI's message lists merged into one append-only node graph
// (docs/formats/gemini.md, "History rewrites").
#include "import/gemini/history.hpp"

#include <set>

#include "import/formats_common.hpp"
#include "import/gemini/messages.hpp"
#include "import/import.hpp"
#include "model/node.hpp"

namespace ctxfold::gemini_detail {
namespace {

constexpr const char* kFormat = "gemini";
constexpr std::string_view kSnapshot = "<state_snapshot>";

/// Blocks without signatures: two versions of a turn that differ only in signatures a later
/// write added are the same turn.
Json unsigned_blocks(Json blocks) {
  for (auto& b : blocks)
    if (b.is_object()) {
      b.erase("gemini_signature");
      b.erase("signature");
    }
  return blocks;
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

History::History(ImportSink& sink, std::string session, std::string file)
    : sink_(sink), session_(std::move(session)), file_(std::move(file)) {}

std::string History::incarnation(const std::string& msg_id) {
  int& n = incarnations_[msg_id];
  std::string id;
  do id = msg_id + "~r" + std::to_string(++n + 1);
  while (nodes_.count(id));
  return id;
}

std::vector<std::string> History::spine_between(const std::optional<std::string>& after,
                                                const std::string& last) const {
  std::vector<std::string> rev;
  std::optional<std::string> at = last;
  while (at && (!after || *at != *after)) {
    auto it = nodes_.find(*at);
    if (it == nodes_.end() || it->second.summary) return {};
    rev.push_back(*at);
    at = it->second.pred;
  }
  if (after && !at) return {};  // `after` is not an ancestor of `last`
  return {rev.rbegin(), rev.rend()};
}

bool History::add_summary(const std::vector<ListedMessage>& run, const std::optional<std::string>& after,
                          const std::optional<std::string>& last_covered, std::int64_t line) {
  if (!last_covered) return false;
  std::vector<std::string> covers = spine_between(after, *last_covered);
  if (covers.empty()) return false;
  std::string id;
  for (const auto& m : run)
    if (message_text(m.message).find(kSnapshot) != std::string::npos) id = m.id;
  if (nodes_.count(id)) id = incarnation(id);
  Entry e;
  e.node_id = id;
  e.pred = after;
  e.summary = true;
  e.covers = std::move(covers);
  e.run = run;
  e.msg.line = line;
  order_.push_back(id);
  for (const auto& m : run) current_[m.id] = id;
  nodes_.emplace(id, std::move(e));
  return true;
}

void History::merge(const std::vector<ListedMessage>& list, bool from_rewrite) {
  Cursor c;
  while (c.i < list.size()) {
    auto cur = current_.find(list[c.i].id);
    if (cur != current_.end())
      merge_known(list, from_rewrite, nodes_.at(cur->second), c);
    else
      merge_new(list, c);
  }
  if (!list.empty()) {
    tip_ = c.prev;
    raw_tip_ = c.raw_prev;
  }
}

void History::merge_known(const std::vector<ListedMessage>& list, bool from_rewrite, Entry& e, Cursor& c) {
  const ListedMessage& lm = list[c.i];
  if (e.summary) {  // a message a compaction stands for: the summary's place
    const std::string sid = e.node_id;
    while (c.i < list.size() && current_.count(list[c.i].id) && current_[list[c.i].id] == sid) ++c.i;
    c.prev = sid;
    c.raw_prev = e.covers.back();
    c.after_synthesized = false;
    return;
  }
  if (e.pred == c.raw_prev) {
    revise(e, lm, from_rewrite);
    c.prev = c.raw_prev = e.node_id;
    c.after_synthesized = false;
    ++c.i;
    return;
  }
  // Known, but the list puts it after another message: a branch from here on.
  // The CLI's resume rebuilds tool results as "<id>_response" messages (once more on each
  // resume, so one list may hold the same one twice): what moves around them is its rewrite.
  if (c.after_synthesized || ends_with(lm.id, "_response") ||
      (c.i > 0 && ends_with(list[c.i - 1].id, "_response")))
    c.reported = true;
  if ((from_rewrite || lm.rewritten) && !c.reported) {
    c.reported = true;
    sink_.warn(lm.line, "rewrite.reordered",
               "a $set.messages rewrite moves message '" + lm.id +
                   "'; it and what follows are recorded again on a branch");
  }
  Entry n;
  n.node_id = incarnation(lm.id);
  n.pred = c.raw_prev;
  n.msg = lm;
  order_.push_back(n.node_id);
  current_[lm.id] = n.node_id;
  c.prev = c.raw_prev = n.node_id;
  nodes_.emplace(n.node_id, std::move(n));
  c.after_synthesized = false;
  ++c.i;
}

void History::revise(Entry& e, const ListedMessage& lm, bool from_rewrite) {
  std::string why;
  const Json before = unsigned_blocks(convert_message(e.msg.message, &why).content);
  const Json after = unsigned_blocks(convert_message(lm.message, &why).content);
  if (before == after || !(from_rewrite || lm.rewritten)) {
    // The same turn, or a streamed update of it: the newest version's fields win, and
    // fields only the earlier one has stay (a rewrite drops tokens, model, thoughts).
    Json merged = e.msg.message;
    for (auto it = lm.message.begin(); it != lm.message.end(); ++it) merged[it.key()] = it.value();
    e.msg = lm;
    e.msg.message = std::move(merged);
  } else if (e.msg.line != lm.line && e.rejected_line != lm.line) {
    e.rejected_line = lm.line;
    sink_.warn(lm.line, "rewrite.changed",
               "a $set.messages rewrite changes message '" + lm.id +
                   "'; the earlier version stays, the new one is kept as a record");
    sink_.keep_record(session_, lm.line, "message.rewritten", dump_json(lm.message));
  }
}

void History::merge_new(const std::vector<ListedMessage>& list, Cursor& c) {
  // A run of new messages.
  std::size_t j = c.i;
  bool snapshot = false;
  while (j < list.size() && !current_.count(list[j].id)) {
    snapshot = snapshot || message_text(list[j].message).find(kSnapshot) != std::string::npos;
    ++j;
  }
  if (snapshot) {
    std::optional<std::string> last_covered = raw_tip_;
    if (j < list.size()) last_covered = nodes_.at(current_.at(list[j].id)).pred;
    std::vector<ListedMessage> run(list.begin() + static_cast<std::ptrdiff_t>(c.i),
                                   list.begin() + static_cast<std::ptrdiff_t>(j));
    if (add_summary(run, c.raw_prev, last_covered, run.front().line)) {
      c.prev = current_.at(run.front().id);
      c.raw_prev = last_covered;
      c.after_synthesized = false;
      c.i = j;
      return;
    }
  }
  for (; c.i < j; ++c.i) {
    Entry n;
    n.node_id = nodes_.count(list[c.i].id) ? incarnation(list[c.i].id) : list[c.i].id;
    n.pred = c.raw_prev;
    n.msg = list[c.i];
    order_.push_back(n.node_id);
    current_[list[c.i].id] = n.node_id;
    c.prev = c.raw_prev = n.node_id;
    c.after_synthesized = ends_with(list[c.i].id, "_response");
    // The CLI's resume rebuilds tool results as "<id>_response" messages: the branch that
    // follows is its ordinary rewrite, not a contradiction.
    if (c.after_synthesized) c.reported = true;
    nodes_.emplace(n.node_id, std::move(n));
  }
}

std::string own_node_id(ImportSink& sink, const std::string& session, const std::string& id) {
  auto other = sink.store().node(id, false);
  return other && other->session != session ? id + "@" + session : id;
}

MessageNodes message_nodes(ImportSink& sink, const std::string& session, const std::string& file,
                           const std::string& node_id, const ListedMessage& msg, std::int64_t index,
                           const std::function<bool(const std::string&)>& answered) {
  MessageNodes out;
  std::string unknown_type;
  Converted c = convert_message(msg.message, &unknown_type);
  if (!unknown_type.empty())
    sink.warn(msg.line, "record.unknown_type", "unknown Gemini message type '" + unknown_type + "' kept as an event node");
  Node& n = out.node;
  n.id = node_id;
  n.session = session;
  n.kind = c.kind;
  n.role = c.role;
  n.content = std::move(c.content);
  n.metadata = std::move(c.metadata);
  n.metadata["source"] = import_detail::source_meta(kFormat, file, msg.line, index);
  if (node_id != msg.id) n.metadata["gemini_message_id"] = msg.id;
  bool needs_results = false;
  if (c.has_tool_calls)
    for (const auto& t : msg.message["toolCalls"])
      if (!answered(json_str(t, "id"))) needs_results = true;
  if (!needs_results) return out;
  Converted r = results_node(msg.message);
  Node rn;
  rn.id = node_id + ":results";
  rn.session = session;
  rn.role = r.role;
  rn.content = std::move(r.content);
  rn.metadata = std::move(r.metadata);
  rn.metadata["source"] = import_detail::source_meta(kFormat, file, msg.line);
  out.results = std::move(rn);
  return out;
}

void History::emit() {
  // Call ids some message answers: an assistant turn whose calls are all answered has its
  // results in that message; otherwise (older recordings) a "<id>:results" node follows it.
  std::set<std::string> answered;
  for (const auto& [id, e] : nodes_)
    if (!e.summary)
      for (auto& c : answered_call_ids(e.msg.message)) answered.insert(c);
  std::map<std::string, std::string> followed_by;  // node -> its synthesized results node
  // The id each node was stored under: the sink keeps a node whose id another session already
  // holds (Gemini CLI gives its session context message the same id in every session of a
  // project) as "<id>~<hex>", and its successors must name that copy.
  std::map<std::string, std::string> stored;
  auto as_stored = [&](const std::string& id) {
    auto s = stored.find(id);
    return s == stored.end() ? id : s->second;
  };
  auto chain_id = [&](const std::optional<std::string>& id) -> std::optional<std::string> {
    if (!id) return id;
    auto f = followed_by.find(*id);
    return as_stored(f == followed_by.end() ? *id : f->second);
  };
  std::size_t index = 0;
  for (const std::string& nid : order_) {
    const Entry& e = nodes_.at(nid);
    Node n;
    n.id = own_node_id(sink_, session_, nid);
    n.session = session_;
    n.predecessor = chain_id(e.pred);
    if (e.summary) {
      n.kind = kind::kSummary;
      n.role = role::kUser;
      Json described = Json::array();
      for (const auto& m : e.run) {
        Converted c = convert_message(m.message, nullptr);
        described.push_back(Json{{"id", m.id}, {"type", json_str(m.message, "type")}, {"blocks", c.content.size()}});
        for (auto& b : c.content) n.content.push_back(b);
      }
      for (const auto& c : e.covers) {
        n.covers_ids.push_back(as_stored(c));
        auto f = followed_by.find(c);
        if (f != followed_by.end()) n.covers_ids.push_back(as_stored(f->second));
      }
      n.metadata["strategy"] = "rolling";
      n.metadata["origin"] = "import";
      n.metadata["format"] = kFormat;
      n.metadata["gemini_messages"] = described;
      n.metadata["source"] = import_detail::source_meta(kFormat, file_, e.msg.line);
      stored[nid] = sink_.add(std::move(n), e.msg.line);
      continue;
    }
    MessageNodes m = message_nodes(sink_, session_, file_, nid, e.msg, static_cast<std::int64_t>(index++),
                                   [&](const std::string& call) { return answered.count(call) != 0; });
    m.node.id = n.id;
    m.node.predecessor = n.predecessor;
    stored[nid] = sink_.add(std::move(m.node), e.msg.line);
    if (m.results) {
      m.results->predecessor = as_stored(nid);
      stored[nid + ":results"] = sink_.add(std::move(*m.results), e.msg.line);
      followed_by[nid] = nid + ":results";
    }
  }
  if (auto head = chain_id(tip_)) {
    auto it = nodes_.find(*tip_);
    // HEAD is a chain node: after a compaction that kept nothing, the last covered node.
    if (it != nodes_.end() && it->second.summary) head = chain_id(raw_tip_);
    std::set<std::string> ours;
    for (const auto& [nid, stored_id] : stored) ours.insert(stored_id);
    if (head) sink_.follow_rewrite(session_, *head, ours);
  }
}

}  // namespace ctxfold::gemini_detail
