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
  // Gemini CLI derives the session context message's id from its text, so sessions of one
  // project share it: this session's copy is "<id>@<session>" (History::emit does the same).
  if (auto other = sink_.store().node(msg.id, false); other && other->session != session_)
    m.node.id = msg.id + "@" + session_;
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
