// The Gemini CLI's message lists merged into one append-only node graph
// (docs/formats/gemini.md, "History rewrites").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "util/json.hpp"

namespace ctxfold {
class ImportSink;
}

namespace ctxfold::gemini_detail {

/// One message as the file holds it at some moment, and the line it was last written on.
struct ListedMessage {
  std::string id;
  Json message;
  std::int64_t line = 0;
  bool rewritten = false;  ///< read from a `$set.messages` (not the live recording)
};

/// The node of one message of the chain (not a summary): id node_id, session, content and
/// metadata converted (warning "record.unknown_type" for a type Gemini CLI does not write),
/// metadata.source naming `file`, msg.line and `index` (the message's place among the file's
/// message nodes); and, when the message has tool calls some of which `answered` says no message
/// answers (older recordings), the "<node_id>:results" node holding toolCalls[].result. The
/// caller sets both predecessors.
struct MessageNodes {
  Node node;
  std::optional<Node> results;
};
MessageNodes message_nodes(ImportSink& sink, const std::string& session, const std::string& file,
                           const std::string& node_id, const ListedMessage& msg, std::int64_t index,
                           const std::function<bool(const std::string&)>& answered);

/// The id the node of message `id` is stored under in `session`: the id itself, or
/// "<id>@<session>" when another session already holds a node of that id. Gemini CLI derives the
/// session context message's id from its text, so the sessions of one project share it; the
/// suffix keeps each session's copy apart and is the same on every import.
std::string own_node_id(ImportSink& sink, const std::string& session, const std::string& id);

/// Accumulates every message list a Gemini CLI file ever held (the live recording, each
/// `$set.messages` rewrite, the state before a `$rewindTo`) into nodes that never lose a turn:
///  - a message already merged at the same place (same predecessor) is the same node; a newer
///    version replaces it when it is the same turn (streamed updates, string vs Part form, added
///    signatures), else the change is kept as a source record with warning "rewrite.changed";
///  - a known message that a list puts after a different predecessor (the CLI inserts a
///    synthesized "<id>_response" tool-result message when it resumes) starts a branch: it and
///    what follows are re-recorded as "<id>~rN" nodes, the earlier chain stays;
///  - new messages that replace a stretch of the chain and carry a `<state_snapshot>` (chat
///    compression) become one summary view node: covers_ids = the replaced chain nodes, content
///    = the new messages' blocks (metadata.gemini_messages tells the messages apart), strategy
///    "rolling", origin "import". Later lists that still hold those messages map to it.
class History {
 public:
  History(ImportSink& sink, std::string session, std::string file);

  /// Merges one whole list, oldest first. `from_rewrite` is true for a `$set.messages` (a
  /// change of a known turn there is a contradiction), false for the live recording.
  void merge(const std::vector<ListedMessage>& list, bool from_rewrite);

  /// True when a message with this id was merged before.
  bool knows(const std::string& msg_id) const { return current_.count(msg_id) != 0; }

  /// Appends every node to the sink (in the order they were first merged) and proposes HEAD:
  /// the node of the last list's last message.
  void emit();

 private:
  struct Entry {
    std::string node_id;
    std::optional<std::string> pred;
    ListedMessage msg;
    bool summary = false;
    std::vector<std::string> covers;       // summary: covered node ids
    std::vector<ListedMessage> run;        // summary: the messages it stands for
    std::int64_t rejected_line = 0;        // message: the line of a rewrite already reported
  };
  std::string incarnation(const std::string& msg_id);
  std::vector<std::string> spine_between(const std::optional<std::string>& after, const std::string& last) const;
  bool add_summary(const std::vector<ListedMessage>& run, const std::optional<std::string>& after,
                   const std::optional<std::string>& last_covered, std::int64_t line);
  /// Where merging one list stands: the list position and the chain it has reached.
  struct Cursor {
    std::optional<std::string> raw_prev;  // the chain node the next message follows
    std::optional<std::string> prev;      // the node of the previous message (a summary, or raw_prev)
    bool after_synthesized = false;       // the previous message was a new "<id>_response"
    bool reported = false;                // one rewrite.reordered warning per list
    std::size_t i = 0;
  };
  /// Merges list[c.i], a message merged before (node e): the summary's place, the same node, or
  /// a branch.
  void merge_known(const std::vector<ListedMessage>& list, bool from_rewrite, Entry& e, Cursor& c);
  /// A known message listed again at its place: a newer version of the same turn replaces it,
  /// a changed turn is kept as a record ("rewrite.changed").
  void revise(Entry& e, const ListedMessage& lm, bool from_rewrite);
  /// Merges the run of new messages starting at list[c.i]: one summary node when they carry a
  /// state snapshot that replaces a stretch of the chain, else one node each.
  void merge_new(const std::vector<ListedMessage>& list, Cursor& c);

  ImportSink& sink_;
  std::string session_;
  std::string file_;
  std::vector<std::string> order_;             // node ids, first merged first
  std::map<std::string, Entry> nodes_;         // node id -> entry
  std::map<std::string, std::string> current_; // message id -> its current node id
  std::map<std::string, int> incarnations_;
  std::optional<std::string> tip_;             // node of the last merged list's last message
  std::optional<std::string> raw_tip_;         // last raw (non-summary) node of that list
};

}  // namespace ctxfold::gemini_detail
