// A Gemini CLI JSON Lines recording that never rewrites its list (no `$set.messages`, no
// `$rewindTo`: the live recording of one process, by far the common file) imported in two
// streamed passes, in memory bounded by the messages still being written rather than by the file
// (docs/formats/gemini.md "Reading a live recording").
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "import/gemini/history.hpp"

namespace ctxfold::gemini_detail {

/// What pass 1 learns of a live recording, per message record in file order (its ordinal among
/// the file's message records): whether it is the last write of its message id, and which call
/// ids the last writes answer. Ids are kept as 64-bit hashes (16 bytes per record while pass 1
/// runs, then one bit per record and 8 bytes per answered call).
class LiveIndex {
 public:
  /// Pass 1: the message record `ordinal` (0, 1, 2, ... in file order) writes message `id`
  /// and answers `calls` (its functionResponse ids).
  void add(std::uint64_t ordinal, std::string_view id, const std::vector<std::string>& calls);
  /// After pass 1: computes the last writes and the answered calls, frees the rest.
  void finish();
  /// True when record `ordinal` is the last write of its message id.
  bool last_write(std::uint64_t ordinal) const { return ordinal < last_.size() && last_[ordinal]; }
  /// True when a last write answers call id `call`.
  bool answered(std::string_view call) const;

 private:
  std::vector<std::pair<std::uint64_t, std::uint64_t>> writes_;   // (id hash, ordinal)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> answers_;  // (ordinal, call hash)
  std::vector<bool> last_;
  std::vector<std::uint64_t> answered_;  // sorted call hashes
};

/// Pass 2: the message nodes in first-write order, each from the last write of its id (as
/// History gives them for a list merged once), appended as soon as it and every message first
/// written before it have had their last write. A message whose last write is never recognised
/// is appended at the end with the newest version read.
class LiveEmitter {
 public:
  LiveEmitter(ImportSink& sink, std::string session, std::string file, const LiveIndex& index);

  /// Message record `ordinal` (the same numbering as LiveIndex::add) of message `id`.
  void message(std::uint64_t ordinal, ListedMessage msg);

  /// Appends what is still pending and proposes HEAD: the last message's node (or the results
  /// node after it), as History::emit does.
  void finish();

 private:
  struct Pending {
    ListedMessage msg;
    bool final = false;
  };
  void append(const ListedMessage& msg);

  ImportSink& sink_;
  std::string session_, file_;
  const LiveIndex& index_;
  std::deque<Pending> pending_;
  std::unordered_map<std::string, std::uint64_t> place_;  // pending id -> number of its entry
  std::uint64_t popped_ = 0;                               // entries appended so far
  std::optional<std::string> prev_;                        // the chain node the next one follows
  std::optional<std::string> head_before_;                 // the session's HEAD before the import
  bool head_is_ours_ = false;                              // this import stored that node again
};

}  // namespace ctxfold::gemini_detail
