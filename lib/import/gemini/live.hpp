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
#include "util/json_sax.hpp"

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

/// What pass 1 reads of one record without building its tree: a SAX handler for sax_parse_json
/// (docs/formats/gemini.md "Reading a live recording"). A record is plain when these fields
/// are all pass 1 needs of it: an object that is a message (a string id, or a type and content
/// without one), with no field of a type Gemini CLI never writes there, no header fields (a
/// sessionId without a type) and no `$set` or `$rewindTo`. Any other record is read again whole
/// (JsonlReader::read_at) and goes the tree's way. A key written twice counts as the tree reads
/// it: its last value.
class RecordProbe final : public JsonEvents {
 public:
  /// One record's reading.
  struct Seen {
    bool plain = false;
    bool anonymous = false;          ///< a plain message without a string id (the caller numbers it)
    std::string id;                  ///< a plain message's id
    std::vector<std::string> calls;  ///< the call ids its content's functionResponse parts answer, in order
  };
  /// Forgets the last record (call before each sax_parse_json).
  void reset();
  /// After a successful parse: what the record was (moves the id and calls out).
  Seen seen();

  bool null() override { return value(Kind::null); }
  bool boolean(bool) override { return value(Kind::other); }
  bool number_integer(std::int64_t) override { return value(Kind::other); }
  bool number_unsigned(std::uint64_t) override { return value(Kind::other); }
  bool number_float(double) override { return value(Kind::other); }
  bool string(std::string_view s) override;
  bool key(std::string_view k) override;
  bool start_object() override;
  bool end_object() override;
  bool start_array() override;
  bool end_array() override;

 private:
  enum class Kind : std::uint8_t { absent, null, string, array, object, other };
  /// The top-level fields whose value's kind matters (odd_field's, and id).
  enum Field : std::uint8_t { f_id, f_type, f_content, f_tool_calls, f_thoughts, f_count, f_none = f_count };
  /// A value begins at the current depth (a container's before it opens).
  bool value(Kind k);

  int depth_ = 0;
  bool object_ = false;  // the record is an object
  Kind kind_[f_count] = {};
  Field field_ = f_none;  // the top-level key whose value comes next
  bool session_id_ = false, set_ = false, rewind_ = false;
  std::string id_;
  std::vector<std::string> calls_;
  bool in_content_ = false;  // inside the content array (depth 2)
  bool in_part_ = false;     // inside one of its objects (depth 3)
  bool response_key_ = false, in_response_ = false, id_key_ = false;
  bool response_ = false;    // the part's functionResponse is an object
  std::string response_id_;  // ... and its string id ("" none)
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
