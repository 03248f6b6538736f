#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.hpp"
#include "util/json.hpp"

namespace ctxfold {

/// What the trigram index (grep_fts, lib/recall/text_index.hpp) can be asked for a pattern: an
/// FTS5 MATCH expression (one quoted phrase) that every node matching the pattern satisfies.
/// exact: the phrase matches exactly the matching nodes (a literal under -i), so hits are counted
/// without reading them; otherwise each hit is read and matched (the phrase is a superset).
struct IndexQuery {
  std::string match;
  bool exact = false;
  /// Non-empty: ask the short-gram index (grep_gram, schema 008) for this gram instead of grep_fts
  /// (match is then empty): patterns of one or two characters, at least one non-ASCII.
  std::string gram;
  /// Non-empty: the positional trigram index (grep_tri, schema 010) can answer this exactly
  /// instead of grep_fts: the needle (casefold of a -i literal), all ASCII, 3 bytes or more.
  /// match stays set for a database without that index.
  std::string tri;
  /// The folded literals of `match`, each of 3 characters or more: the folded text of every node
  /// that matches holds at least one of them (match is their FTS5 phrases, ORed). What a server's
  /// pg_trgm index is asked with LIKE (lib/recall/like_index.hpp); empty for a gram query.
  std::vector<std::string> literals;
};

/// Literal runs of a regular expression in RE2 syntax (docs/commands.md "grep") that every match
/// contains (each maximal run of literal characters outside groups and classes, \Q...\E quoted
/// text included, minus a character made optional by `?`, `*` or `{`); empty when the expression
/// has a top-level alternative `|` or a flag group naming `i` ((?i), (?-i), (?i:...)). Escaped
/// punctuation counts as literal; `\d`, `\w`, `\pL`, `\x41`, `\101` and the like end a run.
/// Over-conservative by design.
std::vector<std::string> regex_required_literals(std::string_view re);

/// A scan's shortcut: a literal that a node's raw content column (its stored JSON) must contain,
/// byte for byte (ASCII case aside under -i), for the node's text to match. may_match is false
/// only when the row proves it: no \u or \/ escape, no tool_use block, and under -i no
/// character that folds into ASCII (kFoldsToAscii) or, for a CJK literal, no compatibility
/// ideograph. The literal holds no character JSON escapes (", \, controls) and no U+FFFD.
struct RawFilter {
  std::string literal;
  bool ignore_case = false;
  bool needs_cjk_check = false;
  /// Every character of `literal` is a fold anchor (is_fold_anchor) that casefold() leaves as it
  /// is: where the literal occurs (up to ASCII case) in a text and is followed by the text's end or
  /// an anchor, casefold(text) holds it too (casefold splits before anchors).
  bool anchored = false;
  /// `literal` is the whole pattern (casefold of it under -i); false: only the part of it every
  /// match holds (-i and characters other than ASCII and CJK unified), so a hit must be verified.
  bool whole = true;
  bool may_match(std::string_view raw_json) const;
};

/// A compiled grep pattern. Literal by default (every character, SQL/FTS/regex syntax included,
/// matches itself); `regex` selects regular expressions in RE2 syntax (docs/commands.md "grep":
/// no backreferences, no lookaround; linear time in the text, no recursion), matched line by line.
/// `ignore_case` folds case by Unicode rules (utf8proc CASEFOLD|COMPOSE on both the text and the
/// pattern; for regexes the non-ASCII literal characters of the pattern are folded and RE2's
/// case-insensitive mode does the rest). A compiled expression may use 32 MiB (RE2 max_mem).
/// Throws Error(usage,"grep.empty_pattern") for an empty pattern and Error(usage,
/// "grep.bad_pattern") for an expression RE2 refuses (syntax, a backreference or lookaround, a
/// program over the memory budget), naming the problem and the character where it starts.
class Matcher {
 public:
  Matcher(const std::string& pattern, bool regex, bool ignore_case);
  ~Matcher();
  Matcher(Matcher&&) noexcept;
  /// Whether `text` (valid UTF-8) holds a match (no offset work: used for rows outside the page).
  bool matches(std::string_view text) const;
  /// Grapheme offset of the first match in `text` (valid UTF-8), or nullopt. With ignore_case the
  /// match is found in the folded text and mapped back to the original grapheme.
  std::optional<std::size_t> find_grapheme(std::string_view text) const;
  /// The index lookup for this pattern, or nullopt when the index cannot narrow it (fewer than 3
  /// characters of required literal text: patterns shorter than a trigram, a regex without a
  /// literal run, a top-level alternative). Literals of one or two characters with a non-ASCII
  /// one ask the short-gram index instead (IndexQuery::gram): under -i the folded needle, exact;
  /// case-sensitive only when every character is a CJK unified ideograph (nothing composes with
  /// them and they fold to themselves; a compatibility ideograph folds into one, so hits are
  /// verified). Literal -i: the folded needle, exact. Case-sensitive
  /// literal: casefold of the pattern from its first to before its last fold anchor
  /// (is_fold_anchor), which every folded text containing the pattern contains. Regex: the
  /// longest required run, folded the same way (ASCII-lowered under -i).
  std::optional<IndexQuery> index_query() const;
  /// The raw-content prefilter for a scan (RawFilter), or nullopt when none is sound: a regex
  /// without a literal run, a literal with JSON-escaped characters or U+FFFD, an -i literal
  /// without ASCII or CJK unified characters (with some, their longest run, RawFilter::whole
  /// false).
  std::optional<RawFilter> raw_filter() const;
  /// The same shortcut over a node's searchable text itself (the text packs, lib/recall/
  /// text_packs.hpp) rather than its JSON: no JSON escaping to fear, so literals with quotes,
  /// backslashes, controls or U+FFFD qualify; may_match's JSON checks do not apply (the caller
  /// consults the pack flags instead).
  std::optional<RawFilter> text_filter() const;
  /// A literal pattern (not --regex): a filter hit is then a match, up to case folding.
  bool literal() const;

 private:
  std::optional<RawFilter> filter(bool json) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Where grep looks: raw history, view nodes (summaries, archives, notes), both, or the
/// thinking blocks of raw history (the model's reasoning text, which it read back on later turns
/// where the provider resends it; never in the index: always scanned).
enum class GrepIn { raw, summaries, both, thinking };

struct GrepOptions {
  std::string pattern;
  bool regex = false;
  bool ignore_case = false;
  GrepIn in = GrepIn::both;
  /// One session, or every session when empty.
  std::optional<std::string> session;
  /// Only the nodes one view node covers, recursively (raw rows and the child summaries).
  std::optional<std::string> scope;
  /// Paging: raw and summary matches are paged separately at the same offset.
  std::int64_t offset = 0;
  std::int64_t limit = -1;  ///< negative: no limit
  /// Ignore the index and scan every node (for tests and benchmarks comparing the two).
  bool no_index = false;
  /// Read and match every node: no index, no raw-content prefilter (the tests' reference).
  bool exhaustive = false;
  /// Ignore the text packs: scan the nodes' JSON (with the raw-content prefilter).
  bool no_packs = false;
  /// Index hits that must each be read and matched (not IndexQuery::exact) above which grep scans
  /// instead; negative: max(1000, indexed nodes / 512).
  std::int64_t max_verified = -1;
  /// Seqs of nodes neither counted nor reported: `grep --all-sessions` passes the shared prefixes
  /// of forked and resumed sessions (docs/forensics.md "Lineage"), found once with their parent.
  std::set<std::int64_t> skip;
};

/// One matching node (one record per matching node; offset/snippet describe its first match).
struct GrepMatch {
  std::string session, id, kind, role;
  std::int64_t seq = 0;
  bool raw = true;
  std::optional<std::string> covered_by;  ///< the newest view node whose covers include it
  std::int64_t offset = 0;                ///< grapheme offset of the match in node_text
  std::string snippet;                    ///< ~80 graphemes around the match, valid UTF-8
};

struct GrepTotals {
  std::int64_t raw_matches = 0;      ///< matching raw nodes, all pages
  std::int64_t summary_matches = 0;  ///< matching view nodes, all pages
  std::int64_t nodes_scanned = 0;   ///< nodes whose text was read
  std::int64_t elapsed_ms = 0;
  std::string index = "scan";       ///< "fts5" or "grams" (grep_gram): that index answered up to indexed_through; "scan"
  std::int64_t indexed_through = 0; ///< nodes after this seq were scanned (0 when index is "scan"; the CLI prints null)
  std::string index_note;           ///< why an existing index was not used, if it was not
  std::int64_t packed_through = 0;  ///< nodes after indexed_through up to this seq were scanned from text packs
};

/// Finds the nodes whose searchable_text matches, in seq order, and calls on_match for the matches
/// inside the page. When `ctxfold index` has built grep_fts and the pattern has an index_query,
/// nodes with seq <= the indexed seq are looked up in the index (exact hits counted from
/// node_text, other hits read and matched) and the rest (the tail appended since) is scanned;
/// otherwise every node is scanned, streamed from one statement. Both give the same matches,
/// counts and pages. Read-only: a stale index is never updated here.
/// Errors: those of Matcher, Error(bad_input,"node.unknown"/"node.not_view") for --scope.
GrepTotals grep(Store& st, const GrepOptions& o, const std::function<void(const GrepMatch&)>& on_match);

/// `grep --in thinking`: the same contract as grep over the text of each raw node's thinking
/// blocks (joined by "\n" in block order): one GrepMatch a matching node (kind "thinking" is not a
/// node kind: GrepMatch::kind stays the node's), offset in that text, paged by o.offset/o.limit.
/// Reads only nodes whose stored content holds a thinking block (a LIKE prefilter on the content
/// column); --scope and the index do not apply (Error(usage,"grep.scope") for a scope).
GrepTotals grep_thinking(Store& st, const GrepOptions& o, const std::function<void(const GrepMatch&)>& on_match);

/// `grep --in`'s value: "raw", "summaries", "both" or "thinking" (docs/commands.md "grep").
/// Errors: Error(usage,"grep.in") naming the value.
GrepIn parse_grep_in(const std::string& in);

/// One match of schema ctxfold.grep/2 as its fields, in order (docs/commands.md "grep"):
/// {"session","id","seq","kind","role" (null when none),"raw","in" ("thinking" under
/// GrepIn::thinking, else "text"),"covered_by" (null when none),"offset" (graphemes),"snippet"}.
/// The one definition `grep` prints and `mcp`'s grep tool returns.
Json grep_match_record(const GrepMatch& m, GrepIn in);

/// About 80 graphemes of `text` around the grapheme offset (30 before it), valid UTF-8.
std::string grep_snippet(std::string_view text, std::size_t grapheme);

/// The newest view node whose covers include `id` (covers_node index), or nullopt.
std::optional<std::string> covering_summary(Store& st, const std::string& id);

}  // namespace ctxfold
