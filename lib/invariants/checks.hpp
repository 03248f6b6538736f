#pragma once
// Internal to verify-invariants (lib/invariants/*.cpp): the per-session checks the scheduler in
// verify.cpp runs (ledger.cpp, head.cpp, render_checks.cpp, sqlite_checks.cpp, I4's supersession
// chain in verify_compaction.cpp), the finding helpers they share, and the session's links
// (Chain) that the ledger scan gathers for I5's spine walk. Not included outside lib/invariants.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "invariants/verify.hpp"
#include "model/strategy_label.hpp"
#include "render/render.hpp"
#include "store/store.hpp"

namespace ctxfold::verify_detail {

/// Adds a violation to c.
inline void add(Check& c, const std::string& session, std::vector<std::string> nodes, std::string message) {
  c.violations.push_back(Violation{session, std::move(nodes), std::move(message)});
}
/// Adds a warning to c.
inline void warn(Check& c, const std::string& session, std::vector<std::string> nodes, std::string message) {
  c.warnings.push_back(Violation{session, std::move(nodes), std::move(message)});
}

/// One session's predecessor links as seqs, gathered by the I1/I2 scan (ascending seq) so that
/// I2's cycle walk and I5's spine walk need no second pass over the session's rows: 17 bytes a
/// node instead of a re-read of every row (at 10^6 nodes each pass reads the whole file).
struct Chain {
  static constexpr std::int64_t kRoot = 0;      ///< no predecessor
  static constexpr std::int64_t kOutside = -1;  ///< a predecessor missing or in another session
  std::vector<std::int64_t> seqs;  ///< ascending
  std::vector<std::int64_t> pred;  ///< the predecessor's seq, or kRoot / kOutside
  std::vector<bool> message;       ///< kind == message
  /// Index of seq in seqs, or npos.
  std::size_t find(std::int64_t seq) const {
    auto it = std::lower_bound(seqs.begin(), seqs.end(), seq);
    return it != seqs.end() && *it == seq ? static_cast<std::size_t>(it - seqs.begin()) : std::string::npos;
  }
};

// ---------------------------------------------------------------- I1, I2 (ledger.cpp)

/// Database-wide: seq values are handed out 1, 2, 3, ... and never reused, so a gap or a
/// high-water mark above the largest seq means a node vanished.
void check_seq_continuity(Store& store, Check& c);

/// Streams the session's nodes in seq order straight from their stored columns (no JSON parse):
/// the digest is recomputed over the bytes append hashed (canonical_node of the stored content and
/// metadata; a view node's covers_ids streamed from its covers rows), so memory stays O(1) in the
/// session's size and any byte changed after the append is caught.
/// I1 (digests, seq order, coverage rows) and I2 (predecessor exists, same session, older; cycles)
/// in one scan of the session's rows in seq order; fills chain for I5's spine walk.
void check_ledger(Store& store, const std::string& session, Check& c, Check& dag, Chain& chain,
                  bool digests = true);

// ---------------------------------------------------------------- I6 (head.cpp)

/// I6 for one session: every HEAD move has an allowed cause, points at an existing node of the
/// session appended before the move, records a sane boundary and continues the move before it.
void check_head(Store& store, const std::string& session, Check& c);

// ---------------------------------------------------------------- I5, I10 (render_checks.cpp)

/// What I10 compares of one request body (render_request_body in one format): SHA-256 of each
/// message's bytes (dump_json) and the bytes of the anthropic body's "system". 64 bytes of digest a
/// message instead of the body, so two renders of a long session are never held at once.
struct BodyPrint {
  std::vector<std::string> messages;  ///< sha256_hex(dump_json(message)), in order
  std::string system;                 ///< dump_json(body["system"]), "\"\"" without one (openai)
  std::size_t leading_system = 0;     ///< messages before the first whose role is not "system"
};

/// The default render of HEAD, made once per session and read by I5, I10 and I4, and what I5 and
/// I10 need of its output, computed as its messages stream (render_stream): the tool-pairing findings of both
/// request bodies, each body's BodyPrint and the digest of the `render` JSON document in each
/// format. After check_render, slim() drops the render's content (verify holds one render at a
/// time: docs/invariants.md "Memory").
struct HeadRender {
  Rendered r;
  std::vector<Violation> pairing;  ///< check_pairing's findings over the openai and anthropic bodies
  BodyPrint openai, anthropic;
  std::string openai_document, anthropic_document;  ///< sha256_hex(dump_json(render_to_json(r, format)))
  /// Keeps of r what I10 and I4 read (head, summary, folds, repairs, the summary-kind items
  /// without content) and frees the rest.
  void slim();
};

/// Renders HEAD with the given strategy; nullopt (and a violation in c) when rendering fails.
/// with_prints: also the BodyPrints and document digests (I10 reads them of the rolling render).
std::optional<HeadRender> render_head(Store& store, const std::string& session, const std::string& head,
                                      Check& c, StrategyLabel strategy, bool with_prints = true);

/// I5 for one strategy's render of HEAD: "rolling" (the default render, which also reads lcm
/// folds) or "lcm" (checked when the session holds lcm summaries). Findings of the lcm render say so.
/// I5 for the render in hr (made by render_head with the same strategy).
void check_render(Store& store, const std::string& session, const Chain& chain, Check& c,
                  const HeadRender& hr, StrategyLabel strategy = StrategyLabel::rolling);

/// I10 for HEAD's render a (render_head, strategy rolling; a may be slimmed): a second render gives
/// the same bytes, and the render from HEAD's predecessor is a prefix of a's (prompt-cache
/// stability). Compares digests (HeadRender's prints), holding one further render at a time.
void check_determinism(Store& store, const std::string& session, const std::string& head, const HeadRender& a,
                       Check& c);

// ---------------------------------------------------------------- I4 (verify_compaction.cpp)

/// One active rolling summary at a time (docs/invariants.md "I4"): a rolling summary that names
/// the summary it supersedes must name the one that was active when it was appended. Two summaries
/// superseding the same predecessor were made active by two concurrent compactions, neither
/// absorbing the other. Forks are skipped (their copied metadata names the source's summaries).
void check_supersession(Store& store, const std::vector<std::string>& sessions, Check& c);

// ---------------------------------------------------------------- I11 (sqlite_checks.cpp)

/// I11: the engine's own findings (store/scan.hpp integrity_findings): on SQLite PRAGMA
/// integrity_check (quick_check when quick) and the foreign keys of every table.
void check_sqlite(Store& store, Check& c, bool quick = false);

}  // namespace ctxfold::verify_detail
