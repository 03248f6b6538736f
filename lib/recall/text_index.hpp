#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace ctxfold {

/// The searchable text of a stored content column: node_text of the parsed blocks (text blocks,
/// tool_result text, tool_use name + input), ill-formed UTF-8 replaced by U+FFFD. What grep
/// searches, expand pages and the index folds. `path`, `seq` and `id` (empty when the caller did
/// not read it) name the row in the error of a column that is not JSON: store.hpp
/// parse_node_content, Error(bad_input, "db.bad_json").
std::string searchable_text(std::string_view content_json, const std::string& path, std::int64_t seq,
                            std::string_view id = {});

/// Version tag of the folded text in grep_fts: the fold format and utf8proc's Unicode version.
/// An index written under another tag is not used by grep (a newer Unicode may fold differently).
std::string text_fold_version();

/// The derived text data (schema 002, share/schema/002_text_index.sql) as a reader finds it.
/// Read-only: nothing is created or written, and a database from before schema 2 reads as
/// "nothing indexed".
struct TextIndexState {
  /// Every node with seq <= through_seq has a node_text row (0: none has).
  std::int64_t through_seq = 0;
  /// grep_fts holds the case-folded text of those nodes, folded under text_fold_version(), and
  /// this SQLite can query it (FTS5 with the trigram tokenizer).
  bool fts = false;
  /// Why fts is false although an index exists (fold version, missing tokenizer), for the grep
  /// summary record; empty otherwise.
  std::string fts_unusable;
  /// Every node with seq <= gram_through has its short grams in grep_gram (schema 008; 0: none
  /// has, also under another fold version). Never more than through_seq.
  std::int64_t gram_through = 0;
  /// Every node with seq <= tri_through has its ASCII trigrams in grep_tri (schema 010; 0: none
  /// has, also under another fold version). Never more than through_seq.
  std::int64_t tri_through = 0;
};
TextIndexState text_index_state(Store& st);

/// Whether this SQLite has FTS5 with the trigram tokenizer (SQLite >= 3.34 built with FTS5).
/// Needs a writable connection (it creates and drops a temp table).
bool fts5_trigram_available(Db& db);

struct IndexReport {
  std::int64_t indexed = 0;       ///< nodes added by this run
  std::int64_t gram_nodes = 0;    ///< nodes whose short grams this run added (grep_gram)
  std::int64_t tri_nodes = 0;     ///< nodes whose ASCII trigrams this run added (grep_tri)
  std::int64_t tri_postings = 0;  ///< trigram positions this run added (grep_tri)
  std::int64_t through_seq = 0;   ///< the index now reaches this seq
  std::int64_t text_bytes = 0;    ///< bytes of searchable text added
  bool fts = false;               ///< grep_fts is maintained
  bool rebuilt = false;           ///< the old derived data was cleared first
  bool optimized = false;         ///< grep_fts was merged into one segment (after >= 16 MiB of new text)
  std::string reason;             ///< why it was rebuilt, or why fts is off
};

/// `ctxfold index`: brings the derived text data up to the database's max seq. Adds, in seq
/// order, one node_text row per node after through_seq and (when fts5_trigram_available) its
/// casefold()ed searchable text to grep_fts (contentless FTS5, trigram tokenizer, case-sensitive
/// over folded text, rowid = seq), in transactions of about `batch_bytes` of text, each
/// advancing text_index_state.through_seq, so an interrupted run keeps what it committed and the
/// next run resumes. Clears and rebuilds everything when `rebuild` is set, when the stored fold
/// version differs from text_fold_version(), or when FTS5 trigram became available after an
/// index was made without it. Nodes are append-only with increasing seq, so a node with
/// seq <= through_seq can never appear later: max seq indexed is the whole staleness test.
/// After a run that added at least 16 MiB of text, grep_fts is optimized (FTS5 'optimize':
/// one segment). The short-gram index grep_gram (schema 008, short_grams) is kept in the same
/// transactions up to the same seq; a database indexed before it had that table gets its grams
/// for the already indexed nodes first; likewise the positional trigram index grep_tri (schema
/// 010, tri_index.hpp). progress(done, total) is called after each batch.
/// Requires a writable store.
IndexReport update_text_index(Store& st, bool rebuild, std::int64_t batch_bytes = 64 << 20,
                              const std::function<void(std::int64_t, std::int64_t)>& progress = {});

/// Whether a folded needle is a short gram that grep_gram holds: one or two code points, at least
/// one of them >= U+0080 (casefold()ed, valid UTF-8).
bool is_short_gram(std::string_view folded);

/// Calls fn(gram) for every short gram (is_short_gram) of `folded` (casefold()ed valid UTF-8), in
/// text order, repeats included: each code point >= U+0080 and each adjacent pair with one such.
/// A substring of `folded` that is a short gram is one of them, so "folded holds g" equals "g was
/// listed" (UTF-8 is self-synchronizing: a substring that is whole code points starts at one).
void short_grams(std::string_view folded, const std::function<void(std::string_view)>& fn);

/// The nodes with seq <= `through` whose folded text holds the short gram `gram`, ascending, from
/// grep_gram (nothing when the table is absent). Throws Error(bad_input,"gram.corrupt") for a
/// posting list that does not decode to ascending seqs.
void for_each_gram_hit(Store& st, std::string_view gram, std::int64_t through,
                       const std::function<void(std::int64_t)>& fn);

}  // namespace ctxfold
