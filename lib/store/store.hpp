#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "model/node.hpp"
#include "model/strategy_label.hpp"
#include "store/db.hpp"

namespace ctxfold {

/// "No --as-of given": read everything appended so far.
inline constexpr std::int64_t kLatest = std::numeric_limits<std::int64_t>::max();

/// Schema version this binary writes and understands (PRAGMA user_version; migrations are
/// share/schema/NNN_*.sql, applied in order).
std::int64_t schema_version();

/// A session row (sessions are append-only like nodes).
struct SessionInfo {
  std::string id;
  std::string kind = "main";  ///< main | sidechain | fork
  std::optional<std::string> parent_session;
  std::optional<std::string> parent_node;  ///< sidechain: the tool_use node that launched it
  std::optional<std::string> source;
  std::optional<std::string> format;
  Json metadata = Json::object();
  std::int64_t created_seq = 0;
};

/// One recorded HEAD move. cause is one of: import, append, checkout, rewind, fork.
struct HeadMove {
  std::int64_t seq = 0;
  std::string session;
  std::string node_id;
  std::optional<std::string> previous;
  std::string cause;
  std::int64_t boundary_seq = 0;
};

/// One log-only event (compaction bookkeeping: compact/start, compact/summary, compact/end).
struct Event {
  std::int64_t seq = 0;
  std::string session;
  std::string type;
  std::optional<std::string> ref;
  Json payload = Json::object();
  std::int64_t boundary_seq = 0;
};

/// Outcome of appending a node whose id may already exist.
enum class AppendResult {
  added,      ///< stored
  duplicate,  ///< same id, same digest: nothing written (idempotent import)
  conflict,   ///< same id, different payload: nothing written; the caller decides
};

/// The content column of node `seq` (its id `id`, when the caller read it) in the database at
/// `path`, parsed: a JSON array of blocks as the store wrote it. Ill-formed UTF-8 (written by
/// another tool) is replaced by U+FFFD and parsed again rather than failing the read; a value that
/// still does not parse is Error(bad_input, "db.bad_json") naming the file, the table, the column
/// and the row: docs/commands.md "Damaged databases".
Json parse_node_content(std::string_view raw, const std::string& path, std::int64_t seq, std::string_view id = {});

/// One node row exactly as a database stores it: the content and metadata columns are the
/// stored bytes (dump_json's canonical text), never parsed and dumped again, so a copy into
/// another database (store/sync.hpp) hashes to the same digest. seq is the row's seq in the
/// database it was read from.
struct StoredNode {
  std::int64_t seq = 0;
  std::string id;
  std::string session;
  std::optional<std::string> predecessor;
  std::string kind;
  std::optional<std::string> role;
  std::string content;   ///< the content column: a JSON array as stored
  std::string metadata;  ///< the metadata column: a JSON object as stored
  std::vector<std::string> covers_ids;  ///< a view node's covered ids in order (empty otherwise)
  std::int64_t tokens = 0;
  std::string digest;  ///< the digest column (docs/model.md "Nodes")
};

/// The session database. Library code reads and appends through this class only.
/// Errors: Error(environment,"db.open"/"db.io"/"db.locked"), Error(bad_input,"db.not_ctxfold"/"db.empty"/
/// "db.schema_newer"/"db.damaged"/"db.corrupt"/"db.bad_json"): docs/commands.md "Damaged databases".
class Store {
 public:
  enum class Mode { read_only, read_write };

  /// How the store fills a node's `tokens` column at append: a pure function of the node, given
  /// by the caller. The store calls it and knows nothing of how it counts; ctxfold's estimator is
  /// tokens/estimate.hpp estimate_node_tokens, which session/open.hpp open_store passes.
  using TokenMeasure = std::int64_t (*)(const Node&);

  /// read_only never changes a byte and reads one snapshot: one read transaction until destroyed (a
  /// missing file is an environment error). read_write creates the file when absent or schema-less,
  /// enables WAL, applies pending migrations in one write transaction. `measure` must not be null.
  /// A server URL (is_server_url) connects instead: migrations share/schema/pg/,
  /// the version in table ctxfold_schema; read_only reads in one REPEATABLE READ READ ONLY
  /// transaction. `path()` is then the URL with its password redacted.
  static Store open(const std::string& path, Mode mode, TokenMeasure measure);
  /// The measure this store was opened with (to open a second handle on the same file).
  TokenMeasure token_measure() const { return measure_; }

  Db& db() { return db_; }
  bool read_only() const { return db_.read_only(); }
  const std::string& path() const { return path_; }

  /// Largest node seq appended so far (0 for an empty database): the append boundary.
  std::int64_t max_seq();

  // ---- sessions ----
  std::optional<SessionInfo> session(const std::string& id);
  /// All sessions, oldest first.
  std::vector<SessionInfo> sessions();
  /// Inserts a session row; no-op when it already exists (returns false).
  bool create_session(const SessionInfo& s);
  /// --session resolution (docs/commands.md "Choosing the session"): the requested id when given
  /// (exit 3 "session.unknown" if absent), else the only session, else the most recently written
  /// top-level (main) session. Errors with "session.none" on an empty database.
  std::string resolve_session(const std::optional<std::string>& requested);

  // ---- nodes ----
  /// Appends n (fills seq, tokens, digest; writes covers for view nodes). A node whose id exists
  /// is not written: duplicate when the digest matches, conflict otherwise. The caller holds the
  /// write transaction.
  AppendResult append(Node& n);
  /// Why a view node may not be appended as given, or nullopt when it may: its covers_ids must be
  /// non-empty and name stored nodes of its own session (a summary replaces a segment of its own
  /// chain: docs/model.md "View nodes"). Writers that take caller-declared nodes (ctxfold JSONL
  /// import, append) refuse such a node instead of storing a dangling coverage. Cost: one lookup
  /// per covered id.
  std::optional<std::string> coverage_problem(const Node& view);
  std::optional<Node> node(const std::string& id, bool with_covers = true);
  bool has_node(const std::string& id);
  /// The predecessor of a stored node (nullopt for a root or an unknown id), without reading
  /// its content.
  std::optional<std::string> predecessor_of(const std::string& id);
  /// Where a node sits, read without its content: seq, session and predecessor.
  struct NodeLink {
    std::int64_t seq = 0;
    std::string session;
    std::optional<std::string> predecessor;
  };
  /// The link of node `id`, or nullopt when there is no such node. One indexed lookup.
  std::optional<NodeLink> link(const std::string& id);
  /// Appends a copy of chain (non-view) node `from` as node `to` of `session` (fork's copies,
  /// docs/strategies.md "What a fork copies"): kind, role, content and tokens are kept — the content bytes as stored,
  /// never parsed (they are dump_json's canonical form) — and `edit` rewrites the copy's metadata
  /// and predecessor, given the stored ones. The digest is computed over the copy's canonical form
  /// (model/node.hpp canonical_node), as append does. Returns false when `from` does not exist;
  /// throws the database's constraint error when `to` already does.
  bool copy_node(const std::string& from, const std::string& to, const std::string& session,
                 const std::function<void(Json& metadata, std::optional<std::string>& predecessor)>& edit);
  std::optional<Node> node_by_seq(std::int64_t seq, bool with_covers = true);
  /// The row of node `seq` as stored (StoredNode), its covers_ids loaded; nullopt when there is
  /// no such node. Nothing is parsed, so a damaged JSON column is returned as it is.
  std::optional<StoredNode> stored_node(std::int64_t seq);
  /// Up to `limit` rows of `session` with seq >= first_seq, in seq order, as stored_node reads
  /// them: one statement for the rows, one per view node for its covers (sync's reads from a
  /// server, where each statement is a round trip).
  std::vector<StoredNode> stored_nodes(const std::string& session, std::int64_t first_seq, int limit);
  /// The digest of a stored row recomputed from its bytes (model/node.hpp canonical_node over
  /// the content and metadata columns as they are): what verify-invariants' I1 compares with the
  /// digest column.
  static std::string stored_digest(const StoredNode& n);
  /// Appends a row read from another database (store/sync.hpp) with its bytes, tokens and digest
  /// unchanged: seq is this database's next one, covers rows are written for a view node, and
  /// `n.seq` is set to the new seq. The caller checked stored_digest(n) == n.digest and holds the
  /// write transaction. A node whose id exists is not written: duplicate when its stored digest
  /// is n.digest, conflict otherwise.
  AppendResult append_stored(StoredNode& n);

  /// Ids of the nodes whose predecessor is id, in seq order. Builds `nodes_predecessor` first
  /// when a bulk load deferred it (defer_predecessor_index), so the lookup stays one index seek.
  std::vector<std::string> children(const std::string& id);

  /// A bulk load into a SQLite database that holds no node yet: drops the `nodes_predecessor`
  /// index inside the caller's open write transaction, so each appended node updates one index
  /// keyed by a random id (`nodes.id`) instead of two; restore_predecessor_index() builds it again
  /// in one sorted pass before the caller commits. A rollback (an error, a kill) restores the
  /// index with everything else. Returns whether it was dropped: false on a server database or
  /// when any node exists (an incremental import reads through the index; docs/import.md
  /// "A first import").
  bool defer_predecessor_index();
  /// Builds `nodes_predecessor` again after defer_predecessor_index (the same definition as the
  /// schema's); a no-op when it was not deferred.
  void restore_predecessor_index();
  /// The covered ids of a view node, in order.
  std::vector<std::string> covers_of(std::int64_t view_seq);
  /// Calls fn for each node of session with seq <= as_of in seq order until fn returns false.
  void for_each_node(const std::string& session, const std::function<bool(const Node&)>& fn,
                     std::int64_t as_of = kLatest, bool with_covers = true);
  std::int64_t node_count(const std::string& session, std::int64_t as_of = kLatest);
  /// View nodes of a session (optionally one kind), oldest first.
  std::vector<Node> view_nodes(const std::string& session, const std::string& kind_filter = {},
                               std::int64_t as_of = kLatest, bool with_covers = false);
  /// The active rolling summary: the newest summary node with metadata.strategy "rolling" (or no
  /// strategy) at or before as_of (one active summary; older ones are superseded: docs/model.md).
  /// covers_ids are not loaded (use covers_of when needed); covers_first/last/count are in
  /// Node::metadata under "covers" {"first","last","count"}.
  std::optional<Node> active_summary(const std::string& session, std::int64_t as_of = kLatest);
  /// The system prompt recorded for a session at or before as_of: its newest node of kind
  /// "event" with metadata.event "system_prompt" (content: the prompt's text blocks; metadata.tools:
  /// the tool list the request carried, when known; docs/render.md "The system prompt").
  /// nullopt when the session records none. Cost: one indexed scan of the session's event nodes,
  /// newest first, stopping at the first match.
  std::optional<Node> system_prompt(const std::string& session, std::int64_t as_of = kLatest);
  /// The session's newest node of kind `kind` at or before as_of, loaded without covers_ids (the
  /// notes layer's current notes: kind "notes"); nullopt when it has none. One indexed lookup.
  std::optional<Node> latest_of_kind(const std::string& session, const std::string& kind,
                                     std::int64_t as_of = kLatest);

  /// Where one stored summary applies, read without its content (covers_first/last/count columns).
  struct SummaryRange {
    std::int64_t seq = 0;
    std::string id;
    std::optional<std::string> predecessor;
    std::string first, last;
    std::int64_t count = 0;
  };
  /// The summaries (kind summary with coverage) of a session whose metadata.strategy is stored
  /// as label_name(`label`) (an unlabelled summary is not returned), at or before as_of, oldest
  /// first. Cost: one indexed scan of the session's summaries, no content read.
  std::vector<SummaryRange> summary_ranges(const std::string& session, StrategyLabel label,
                                           std::int64_t as_of = kLatest);
  /// The same for view nodes of another kind (summary_ranges is view_ranges with kind "summary"):
  /// snapcompact archives are read as folds with kind "archive", label snapcompact.
  std::vector<SummaryRange> view_ranges(const std::string& session, const std::string& kind, StrategyLabel label,
                                        std::int64_t as_of = kLatest);
  /// The newest view node of `kind` with metadata.strategy label_name(`label`) and a coverage, at or before
  /// as_of (snapcompact's active archive: each recompaction appends a longer one). Loaded like
  /// active_summary (covers in metadata.covers, covers_ids not loaded).
  std::optional<Node> active_view(const std::string& session, const std::string& kind, StrategyLabel label,
                                  std::int64_t as_of = kLatest);
  /// Whether view node view_seq covers id (one indexed lookup; the covers list is not read).
  bool covers_contains(std::int64_t view_seq, const std::string& id);

  // ---- HEAD ----
  /// The session's HEAD at as_of (the newest recorded move with boundary <= as_of).
  std::optional<std::string> head(const std::string& session, std::int64_t as_of = kLatest);
  /// Records a HEAD move. cause: import | append | checkout | rewind | fork.
  void move_head(const std::string& session, const std::string& node_id, const std::string& cause);
  std::vector<HeadMove> head_moves(const std::string& session);
  /// Records a HEAD move copied from another database (store/sync.hpp): node, previous and
  /// cause as given, the boundary this database's max_seq() (the append boundary of the copy).
  void copy_head_move(const HeadMove& m);

  // ---- log-only events ----
  std::int64_t log_event(const std::string& session, const std::string& type, const std::optional<std::string>& ref,
                         const Json& payload);
  std::vector<Event> events(const std::string& session, const std::string& type_prefix = {});
  /// Logs an event copied from another database with its payload text as given (a JSON object,
  /// stored as it is) at this database's max_seq(); returns the event's seq.
  std::int64_t copy_event(const std::string& session, const std::string& type, const std::optional<std::string>& ref,
                          std::string_view payload_json);
  /// The session's newest event of exactly this type (one indexed lookup), nullopt when none.
  std::optional<Event> last_event(const std::string& session, const std::string& type);

  // ---- verbatim source records ----
  /// Keeps a source line that is not a node; false when the same (session, line, bytes) exists.
  bool add_source_record(const std::string& session, const std::string& source, std::int64_t line,
                         const std::string& type, const std::string& raw);
  std::int64_t source_record_count(const std::string& session);
  /// A kept source line: the file it came from, its line, its record type and its bytes.
  struct SourceRecord {
    std::string source;
    std::int64_t line = 0;
    std::string type;
    std::string raw;
  };
  /// Calls fn for each kept source record of session whose type is `type`, in (file, line)
  /// order, until fn returns false. Cost: one indexed scan of the session's records.
  void for_each_source_record(const std::string& session, const std::string& type,
                              const std::function<bool(const SourceRecord&)>& fn);

 private:
  Store(Db db, std::string path, TokenMeasure measure)
      : db_(std::move(db)), path_(std::move(path)), measure_(measure) {}
  void migrate();
  static Store finish_read_only(Store s);
  Db db_;
  std::string path_;
  TokenMeasure measure_;
  bool predecessor_index_deferred_ = false;
};

}  // namespace ctxfold
