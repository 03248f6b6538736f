// A Gemini CLI live recording imported in two streamed passes (live.hpp).
#include "import/gemini/live.hpp"

#include <algorithm>
#include <set>

#include "import/import.hpp"
#include "store/store.hpp"

namespace ctxfold::gemini_detail {
namespace {

/// FNV-1a, 64-bit: ids are compared by this hash only (a collision of two ids in one file is
/// below 2^-30 even at 10^6 records, and costs at most a node appended later than its place).
std::uint64_t hash_id(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace

void LiveIndex::add(std::uint64_t ordinal, std::string_view id, const std::vector<std::string>& calls) {
  writes_.emplace_back(hash_id(id), ordinal);
  for (const auto& c : calls) answers_.emplace_back(ordinal, hash_id(c));
}

void LiveIndex::finish() {
  std::sort(writes_.begin(), writes_.end());
  last_.assign(writes_.size(), false);
  for (std::size_t k = 0; k < writes_.size(); ++k)
    if (k + 1 == writes_.size() || writes_[k + 1].first != writes_[k].first) last_[writes_[k].second] = true;
  std::vector<std::pair<std::uint64_t, std::uint64_t>>().swap(writes_);
  for (const auto& [ordinal, call] : answers_)
    if (last_write(ordinal)) answered_.push_back(call);
  std::vector<std::pair<std::uint64_t, std::uint64_t>>().swap(answers_);
  std::sort(answered_.begin(), answered_.end());
  answered_.erase(std::unique(answered_.begin(), answered_.end()), answered_.end());
  answered_.shrink_to_fit();
}

bool LiveIndex::answered(std::string_view call) const {
  return std::binary_search(answered_.begin(), answered_.end(), hash_id(call));
}

void RecordProbe::reset() {
  depth_ = 0;
  object_ = false;
  for (auto& k : kind_) k = Kind::absent;
  field_ = f_none;
  session_id_ = set_ = rewind_ = false;
  id_.clear();
  calls_.clear();
  in_content_ = in_part_ = response_key_ = in_response_ = id_key_ = response_ = false;
  response_id_.clear();
}

RecordProbe::Seen RecordProbe::seen() {
  Seen s;
  auto wrong = [&](Field f, Kind a, Kind b) {
    return kind_[f] != Kind::absent && kind_[f] != Kind::null && kind_[f] != a && kind_[f] != b;
  };
  const bool named = kind_[f_id] == Kind::string;
  const bool message = named || (kind_[f_type] != Kind::absent && kind_[f_content] != Kind::absent);
  // As odd_field (gemini/messages.hpp) reads a message; an anonymous one gets a string id before.
  const bool odd = wrong(f_type, Kind::string, Kind::string) || wrong(f_content, Kind::string, Kind::array) ||
                   wrong(f_tool_calls, Kind::array, Kind::array) || wrong(f_thoughts, Kind::array, Kind::array);
  s.plain = object_ && message && !odd && !(session_id_ && kind_[f_type] == Kind::absent) && !set_ && !rewind_;
  s.anonymous = !named;
  s.id = std::move(id_);
  s.calls = std::move(calls_);
  return s;
}

bool RecordProbe::value(Kind k) {
  if (depth_ == 0) {
    object_ = k == Kind::object;
  } else if (depth_ == 1 && field_ != f_none) {
    kind_[field_] = k;  // a key written twice: its last value counts
    if (field_ == f_content) {
      calls_.clear();
      in_content_ = k == Kind::array;
    }
    if (field_ == f_id) id_.clear();
    field_ = f_none;
  } else if (depth_ == 2 && in_content_) {
    in_part_ = k == Kind::object;
    response_ = false;
    response_id_.clear();
  } else if (depth_ == 3 && in_part_ && response_key_) {
    response_ = k == Kind::object;
    in_response_ = response_;
    response_id_.clear();
    response_key_ = false;
  } else if (depth_ == 4 && in_response_ && id_key_) {
    if (k != Kind::string) response_id_.clear();
    id_key_ = false;
  }
  return true;
}

bool RecordProbe::string(std::string_view s) {
  const bool id = depth_ == 1 && field_ == f_id;
  const bool response_id = depth_ == 4 && in_response_ && id_key_;
  value(Kind::string);
  if (id) id_.assign(s);
  if (response_id) response_id_.assign(s);
  return true;
}

bool RecordProbe::key(std::string_view k) {
  if (depth_ == 1) {
    field_ = k == "id"          ? f_id
             : k == "type"      ? f_type
             : k == "content"   ? f_content
             : k == "toolCalls" ? f_tool_calls
             : k == "thoughts"  ? f_thoughts
                                : f_none;
    session_id_ = session_id_ || k == "sessionId";
    set_ = set_ || k == "$set";
    rewind_ = rewind_ || k == "$rewindTo";
  } else if (depth_ == 3 && in_part_) {
    response_key_ = k == "functionResponse";
  } else if (depth_ == 4 && in_response_) {
    id_key_ = k == "id";
  }
  return true;
}

bool RecordProbe::start_object() {
  value(Kind::object);
  ++depth_;
  return true;
}

bool RecordProbe::start_array() {
  value(Kind::array);
  ++depth_;
  return true;
}

bool RecordProbe::end_object() {
  --depth_;
  if (depth_ == 3 && in_response_) {
    in_response_ = false;
  } else if (depth_ == 2 && in_part_) {
    if (response_) calls_.push_back(response_id_);
    in_part_ = false;
  }
  return true;
}

bool RecordProbe::end_array() {
  --depth_;
  if (depth_ == 1 && in_content_) in_content_ = false;
  return true;
}

LiveEmitter::LiveEmitter(ImportSink& sink, std::string session, std::string file, const LiveIndex& index)
    : sink_(sink), session_(std::move(session)), file_(std::move(file)), index_(index),
      head_before_(sink.store().head(session_)) {}

void LiveEmitter::message(std::uint64_t ordinal, ListedMessage msg) {
  const bool final = index_.last_write(ordinal);
  auto [at, added] = place_.try_emplace(msg.id, popped_ + pending_.size());
  if (added) {
    pending_.push_back(Pending{std::move(msg), final});
  } else {
    Pending& p = pending_[at->second - popped_];
    p.msg = std::move(msg);  // written again: the newest version wins
    p.final = final;
  }
  while (!pending_.empty() && pending_.front().final) {
    append(pending_.front().msg);
    place_.erase(pending_.front().msg.id);
    pending_.pop_front();
    ++popped_;
  }
}

void LiveEmitter::append(const ListedMessage& msg) {
  MessageNodes m = message_nodes(sink_, session_, file_, msg.id, msg, static_cast<std::int64_t>(popped_),
                                 [&](const std::string& call) { return index_.answered(call); });
  m.node.id = own_node_id(sink_, session_, msg.id);
  m.node.predecessor = prev_;
  std::string stored = sink_.add(std::move(m.node), msg.line);
  head_is_ours_ = head_is_ours_ || (head_before_ && stored == *head_before_);
  if (m.results) {
    m.results->predecessor = stored;
    stored = sink_.add(std::move(*m.results), msg.line);
    head_is_ours_ = head_is_ours_ || (head_before_ && stored == *head_before_);
  }
  prev_ = std::move(stored);
}

void LiveEmitter::finish() {
  while (!pending_.empty()) {
    append(pending_.front().msg);
    pending_.pop_front();
    ++popped_;
  }
  place_.clear();
  if (!prev_) return;
  std::set<std::string> ours;
  if (head_is_ours_) ours.insert(*head_before_);
  sink_.follow_rewrite(session_, *prev_, ours);
}

}  // namespace ctxfold::gemini_detail
