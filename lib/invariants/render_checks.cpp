// I5 render completeness (HEAD's spine walked against the render, tool pairing) and I10 determinism.
#include "invariants/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "invariants/catalog.hpp"
#include "render/moved.hpp"
#include "util/digest.hpp"
#include "util/json_digest.hpp"
#include "util/error.hpp"

namespace ctxfold::verify_detail {
namespace {

// ---------------------------------------------------------------- I5

/// HEAD's full spine over a session's Chain: one bit per node of the session.
struct Spine {
  std::vector<bool> on;                 ///< by Chain index: the node is on HEAD's spine
  std::vector<std::int64_t> uncovered;  ///< message nodes on the spine that are not in `raw`, ascending seq
  std::unordered_set<std::string> raw_on_spine;  ///< the ids of `raw` that lie on the spine
  bool has(const Chain& chain, std::int64_t seq) const {
    std::size_t i = chain.find(seq);
    return i != std::string::npos && on[i];
  }
};

/// Walks HEAD's spine over the session's links gathered by check_ledger, stopping at a root, at a
/// node seen before (a cycle: I2 reports it) or at a predecessor outside the session. raw: the ids
/// rendered raw.
Spine walk_spine(Store& store, const Chain& chain, const std::string& head,
                 const std::unordered_set<std::string>& raw) {
  Spine sp;
  // The seq from the id index alone; a node of the session is one chain holds.
  auto& look = store.db().cached("SELECT seq FROM nodes WHERE id=?1");
  auto seq_of = [&](const std::string& id) -> std::optional<std::int64_t> {
    ResetOnExit reset(look);
    look.bind(1, id);
    if (!look.step() || chain.find(look.int64(0)) == std::string::npos) return std::nullopt;
    return look.int64(0);
  };
  std::unordered_map<std::int64_t, const std::string*> raw_at;  // raw ids of this session by seq
  for (const auto& id : raw)
    if (auto q = seq_of(id)) raw_at.emplace(*q, &id);
  sp.on.assign(chain.seqs.size(), false);
  auto h = seq_of(head);
  std::size_t i = h ? chain.find(*h) : std::string::npos;
  while (i != std::string::npos && !sp.on[i]) {
    sp.on[i] = true;
    const std::int64_t seq = chain.seqs[i];
    if (auto it = raw_at.find(seq); it != raw_at.end())
      sp.raw_on_spine.insert(*it->second);
    else if (chain.message[i])
      sp.uncovered.push_back(seq);
    i = chain.pred[i] > 0 ? chain.find(chain.pred[i]) : std::string::npos;
  }
  std::sort(sp.uncovered.begin(), sp.uncovered.end());
  return sp;
}

/// Calls fn(id, seq) for each id a view node covers, in order; seq is empty when the id is not a
/// node of the session whose every node chain holds (check_ledger). Streams in batches of
/// kCoveredBatch ids: each batch's seqs are looked up in id order, so consecutive seeks in the id
/// index land on the same pages (a summary's ids are random uuids: in covers order, each seek at
/// 10^6 nodes read a fresh page of a 42 MB index through a 16 MiB cache), and the session is not
/// read from the node's row (chain knows the session's seqs).
constexpr std::size_t kCoveredBatch = 1 << 15;
void for_each_covered(Store& store, std::int64_t view_seq, const Chain& chain,
                      const std::function<void(const std::string&, std::optional<std::int64_t>)>& fn) {
  auto& rows = store.db().cached("SELECT node_id FROM covers WHERE summary_seq = ?1 ORDER BY pos");
  ResetOnExit rows_reset(rows);
  rows.bind(1, view_seq);
  auto& look = store.db().cached("SELECT seq FROM nodes WHERE id=?1");
  std::vector<std::string> ids;
  std::vector<std::uint32_t> by_id;
  std::vector<std::int64_t> seqs;  // 0: not a node of the session (seqs start at 1)
  for (bool more = true; more;) {
    ids.clear();
    while (ids.size() < kCoveredBatch && (more = rows.step())) ids.push_back(rows.text(0));
    by_id.resize(ids.size());
    for (std::uint32_t i = 0; i < by_id.size(); ++i) by_id[i] = i;
    std::sort(by_id.begin(), by_id.end(), [&](std::uint32_t a, std::uint32_t b) { return ids[a] < ids[b]; });
    seqs.assign(ids.size(), 0);
    for (std::uint32_t i : by_id) {
      ResetOnExit look_reset(look);
      look.bind(1, ids[i]);
      if (look.step() && chain.find(look.int64(0)) != std::string::npos) seqs[i] = look.int64(0);
    }
    for (std::size_t i = 0; i < ids.size(); ++i)
      fn(ids[i], seqs[i] > 0 ? std::optional<std::int64_t>(seqs[i]) : std::nullopt);
  }
}

std::string id_at(Store& store, std::int64_t seq) {
  auto& st = store.db().cached("SELECT id FROM nodes WHERE seq=?1");
  ResetOnExit reset(st);
  st.bind(1, seq);
  return st.step() ? st.text(0) : std::to_string(seq);
}

/// The ids in msg's content blocks of the given type, under key.
std::set<std::string> block_ids(const Json& msg, const char* type, const char* key) {
  std::set<std::string> out;
  for (const auto& b : msg["content"])
    if (json_str(b, "type") == type) out.insert(json_str(b, key));
  return out;
}

/// openai: every tool call answered right after its turn and every result answering the turn
/// before it. Fed the body's messages one at a time (render_stream); holds the run of tool
/// messages after the last other message, as ids, and reports in message order.
class OpenaiPairing {
 public:
  OpenaiPairing(const std::string& session, Check& c) : session_(session), c_(c) {}
  void add(const Json& m) {
    if (m["role"] == "tool") {
      const std::string id = json_str(m, "tool_call_id");
      answered_.insert(id);
      bool ok = false;
      if (before_.is_array())
        for (const auto& call : before_)
          if (json_str(call, "id") == id) ok = true;
      if (!ok) later_.push_back(fmt::format("openai render: tool message for '{}' does not follow its call", id));
      return;
    }
    close_run();
    before_ = m.contains("tool_calls") ? m["tool_calls"] : Json();
    calls_ = m["role"] == "assistant" ? before_ : Json();
  }
  /// Closes the last run; call once after the last message.
  void close_run() {
    if (calls_.is_array())
      for (const auto& call : calls_)
        if (!answered_.count(json_str(call, "id")))
          add_v(fmt::format("openai render: tool call '{}' has no tool message after it", json_str(call, "id")));
    for (auto& v : later_) add_v(std::move(v));
    later_.clear();
    answered_.clear();
    calls_ = Json();
  }

 private:
  void add_v(std::string msg) { verify_detail::add(c_, session_, {}, std::move(msg)); }
  const std::string& session_;
  Check& c_;
  Json before_;                       ///< tool_calls of the message before the current tool run
  Json calls_;                        ///< the same when that message is an assistant turn
  std::set<std::string> answered_;    ///< tool_call_ids of the current run
  std::vector<std::string> later_;    ///< the run's own findings, reported after its call's
};

/// anthropic: every tool_use answered in the next message and every tool_result answering the one
/// before. Fed the body's messages one at a time; holds the previous message's tool_use ids.
class AnthropicPairing {
 public:
  AnthropicPairing(const std::string& session, Check& c) : session_(session), c_(c) {}
  void add(const Json& m) {
    const std::set<std::string> results = block_ids(m, "tool_result", "tool_use_id");
    close_assistant(results);
    if (m["role"] == "assistant") {
      open_ = true;
    } else {
      for (const auto& r : results)
        if (!uses_.count(r))
          add_v(fmt::format("anthropic render: tool_result '{}' does not answer the message before it", r));
    }
    uses_ = block_ids(m, "tool_use", "id");
  }
  /// Call once after the last message.
  void finish() { close_assistant({}); }

 private:
  void close_assistant(const std::set<std::string>& next) {
    if (!open_) return;
    open_ = false;
    for (const auto& u : uses_)
      if (!next.count(u)) add_v(fmt::format("anthropic render: tool_use '{}' has no tool_result in the next message", u));
  }
  void add_v(std::string msg) { verify_detail::add(c_, session_, {}, std::move(msg)); }
  const std::string& session_;
  Check& c_;
  std::set<std::string> uses_;  ///< tool_use ids of the previous message
  bool open_ = false;           ///< the previous message is an assistant turn not yet checked
};

}  // namespace

namespace {

/// The bytes of a body's "system" in format f: dump_json(body["system"]) of the anthropic body
/// (a string, or blocks), "\"\"" when it has none (always for openai).
std::string system_bytes(const Rendered& r, RenderFormat f) {
  if (f != RenderFormat::anthropic) return "\"\"";
  const Json system = anthropic_request_system(r);
  return system.is_null() ? std::string("\"\"") : dump_json(system);
}

/// Where I10's prefix comparison of an earlier render's print pb with HEAD's print hb starts in
/// each: past each one's leading system messages when those differ in number or bytes (HEAD
/// carries the client's new system prompt), else {0, 0}.
std::pair<std::size_t, std::size_t> leading_system_skip(const BodyPrint& pb, const BodyPrint& hb) {
  const std::size_t ps = pb.leading_system, hs = hb.leading_system;
  bool same = ps == hs;
  for (std::size_t i = 0; same && i < ps; ++i) same = i < hb.messages.size() && pb.messages[i] == hb.messages[i];
  if (same) return {0, 0};
  return {ps, hs};
}

/// Builds the BodyPrint of a request body one message at a time.
struct PrintBuilder {
  BodyPrint p;
  bool leading = true;
  std::vector<bool> open;  ///< per message: an open turn (stable_prefix), when `track_open`
  bool track_open = false;
  bool openai = true;
  void add(const Json& m) {
    p.messages.push_back(dump_json_sha256(m));
    leading = leading && json_str(m, "role") == "system";
    if (leading) ++p.leading_system;
    if (track_open) open.push_back(open_turn(m));
  }
  /// A message whose tool answers may still arrive (stable_prefix).
  bool open_turn(const Json& m) const {
    if (openai) return m["role"] == "tool" || (m["role"] == "assistant" && m.contains("tool_calls"));
    if (m["role"] != "assistant") return false;
    for (const auto& b : m["content"])
      if (json_str(b, "type") == "tool_use") return true;
    return false;
  }
};

/// render_context for verify: the items' content moved into the messages (render/moved.hpp),
/// then the items dropped but for the summary-kind ones (what I4 reads), without content. The
/// checks read the messages, reads, sections, repairs, folds and figures, and the openai and
/// anthropic documents and bodies, which are the same.
Rendered verify_render(Store& store, const std::string& session, RenderOptions o) {
  o.lean_metadata = true;  // I5 and I10 read no stored source records
  Rendered r = render_moved(store, session, o);
  std::vector<Node> summaries;
  for (auto& n : r.items)
    if (n.kind == kind::kSummary) summaries.push_back(std::move(n));
  r.items = std::move(summaries);
  return r;
}

}  // namespace

void HeadRender::slim() {
  std::vector<Node> summaries;
  for (auto& n : r.items)
    if (n.kind == kind::kSummary) {
      n.content = Json::array();
      summaries.push_back(std::move(n));
    }
  r.items = std::move(summaries);
  r.messages = {};
  r.reads = {};
  r.sections = {};
  r.item_tokens = {};
  r.item_prior_thinking = {};
  r.frames = Json();
}

/// Renders HEAD with the given strategy; nullopt (and a violation in c) when rendering fails.
std::optional<HeadRender> render_head(Store& store, const std::string& session, const std::string& head, Check& c,
                                      StrategyLabel strategy, bool with_prints) {
  HeadRender h;
  try {
    RenderOptions ro;
    ro.strategy = label_name(strategy);
    h.r = verify_render(store, session, ro);
  } catch (const Error& e) {
    add(c, session, {head}, fmt::format("rendering HEAD '{}' failed: {}", head, e.what()));
    return std::nullopt;
  }
  // Each body streamed one message at a time: its pairing findings, its print and the digest of
  // the `render` document in the same format (render_stream); no body or document is held.
  Check pairing = make_check("I5");
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const bool openai = f == RenderFormat::openai;
    OpenaiPairing op(session, pairing);
    AnthropicPairing ap(session, pairing);
    PrintBuilder pb;
    pb.openai = openai;
    const std::string digest = render_stream(h.r, f, [&](const Json& m) {
      if (openai) op.add(m);
      else ap.add(m);
      if (with_prints) pb.add(m);
    }, with_prints);
    if (openai) op.close_run();
    else ap.finish();
    if (!with_prints) continue;
    pb.p.system = system_bytes(h.r, f);
    (openai ? h.openai : h.anthropic) = std::move(pb.p);
    (openai ? h.openai_document : h.anthropic_document) = digest;
  }
  h.pairing = std::move(pairing.violations);
  return h;
}

namespace {

/// Prefixes "lcm render: " to the findings added to c after v0 and w0, when on, as it goes out of scope.
struct LcmLabel {
  Check& c;
  std::size_t v0, w0;
  bool on;
  ~LcmLabel() {
    if (!on) return;
    for (std::size_t i = v0; i < c.violations.size(); ++i) c.violations[i].message = "lcm render: " + c.violations[i].message;
    for (std::size_t i = w0; i < c.warnings.size(); ++i) c.warnings[i].message = "lcm render: " + c.warnings[i].message;
  }
};

/// What check_render's parts share.
struct RenderCheck {
  Store& store;
  const std::string& session;
  const Chain& chain;
  Check& c;
  const Rendered& r;
};

/// A render's reads sorted for I5.
struct RenderReads {
  std::unordered_set<std::string> quoted;  ///< ids a rolling recap quotes
  std::vector<std::string> views;          ///< the view nodes the render substituted
  std::unordered_set<std::string> raw;     ///< raw reads: what the render holds, small
};

/// Sorts the render's reads into quoted ids, substituted views and raw reads; a raw read twice is
/// a violation.
RenderReads sort_reads(const RenderCheck& k) {
  const Rendered& r = k.r;
  RenderReads rr;
  // Ids a rolling recap quotes are read through the recap, not rendered raw: they must be covered
  // by the rendered summary (checked below) and are not counted as raw renders.
  for (const auto& sec : r.sections)
    if (sec.kind == "recap") rr.quoted.insert(sec.ids.begin(), sec.ids.end());
  // Every view node the render substituted: the rolling summary and the lcm folds.
  if (r.summary) rr.views.push_back(*r.summary);
  for (const auto& f : r.folds) rr.views.push_back(f.id);
  std::unordered_set<std::string> view_set(rr.views.begin(), rr.views.end());
  if (r.notes) view_set.insert(*r.notes);  // the notes cover nothing: they are read, not substituted
  // A recorded system prompt (an event) is read off the spine; one held in a node's metadata
  // comes from a node the render also holds raw, which counts as that node's one raw read.
  if (r.system.node && r.system.source == "record") view_set.insert(*r.system.node);
  for (const auto& id : r.reads) {
    if (view_set.count(id)) continue;
    if (rr.quoted.count(id)) continue;
    if (!rr.raw.insert(id).second)
      add(k.c, k.session, {id}, fmt::format("node '{}' is rendered more than once", id));
  }
  return rr;
}

/// Each raw read off HEAD's spine, reported once.
void check_raw_on_spine(const RenderCheck& k, const RenderReads& reads, const Spine& spine) {
  std::unordered_set<std::string> said;
  for (const auto& id : k.r.reads)
    if (reads.raw.count(id) && !spine.raw_on_spine.count(id) && said.insert(id).second)
      add(k.c, k.session, {id}, fmt::format("node '{}' is rendered but is not on HEAD's spine", id));
}

/// Every rendered view node covers spine nodes only, none rendered raw, none covered twice, and
/// the rendered summary covers what the recap quotes. Returns covered_by (below).
std::vector<std::uint32_t> check_view_coverage(const RenderCheck& k, const RenderReads& reads,
                                               const Spine& spine) {
  const Rendered& r = k.r;
  const Chain& chain = k.chain;
  const std::string& session = k.session;
  Check& c = k.c;
  // For each node of the session (by Chain index): 1 + the index in views of the first rendered view
  // node covering it, 0 for none. 4 bytes a node; a second coverer is reported once per node.
  std::vector<std::uint32_t> covered_by(chain.seqs.size(), 0);
  std::vector<bool> twice(chain.seqs.size(), false);
  std::unordered_set<std::string> quoted_covered;
  for (std::uint32_t vi = 0; vi < reads.views.size(); ++vi) {
    const std::string& view_id = reads.views[vi];
    auto s = k.store.node(view_id, false);
    if (!s) continue;
    const bool is_summary = r.summary && *r.summary == view_id;
    for_each_covered(k.store, s->seq, chain, [&](const std::string& id, std::optional<std::int64_t> seq) {
      if (!seq || !spine.has(chain, *seq))
        add(c, session, {s->id, id},
            fmt::format("summary '{}' was rendered but covers node '{}', which is not on HEAD's spine: its coverage "
                        "is not wholly on the spine, so it must not be applied",
                        s->id, id));
      if (reads.raw.count(id))
        add(c, session, {s->id, id},
            fmt::format("node '{}' is rendered raw and also inside rendered summary '{}'", id, s->id));
      if (is_summary && reads.quoted.count(id)) quoted_covered.insert(id);
      const std::size_t i = seq ? chain.find(*seq) : std::string::npos;
      if (i == std::string::npos) return;
      if (covered_by[i] == 0) {
        covered_by[i] = vi + 1;
      } else if (!twice[i]) {
        twice[i] = true;
        add(c, session, {view_id, id},
            covered_by[i] == vi + 1
                ? fmt::format("summary '{}' covers node '{}' twice", view_id, id)
                : fmt::format("node '{}' is covered twice in the render (again by summary '{}')", id, view_id));
      }
    });
  }
  for (const auto& id : reads.quoted)
    if (!quoted_covered.count(id))
      add(c, session, {id}, fmt::format("the recap quotes node '{}', which the rendered summary does not cover", id));
  return covered_by;
}

/// Every message node on HEAD's spine is rendered raw or inside a rendered view node.
void check_spine_covered(const RenderCheck& k, const Spine& spine,
                         const std::vector<std::uint32_t>& covered_by) {
  for (std::int64_t seq : spine.uncovered)
    if (covered_by[k.chain.find(seq)] == 0) {
      std::string id = id_at(k.store, seq);
      add(k.c, k.session, {id},
          fmt::format("node '{}' on HEAD's spine is neither rendered nor inside the rendered summary", id));
    }
}

/// Warns of an active summary whose whole coverage is on the spine but that the render did not apply.
void check_unapplied_summary(const RenderCheck& k, const Spine& spine) {
  const std::string& session = k.session;
  auto active = k.store.active_summary(session);
  if (active && k.r.summary != std::optional<std::string>(active->id)) {
    bool any = false, all_on = true;
    for_each_covered(k.store, active->seq, k.chain, [&](const std::string&, std::optional<std::int64_t> seq) {
      any = true;
      all_on = all_on && seq && spine.has(k.chain, *seq);
    });
    if (any && all_on)
      warn(k.c, session, {active->id},
           fmt::format("active summary '{}' covers a segment of HEAD's spine but was not applied (its predecessor is "
                       "not the segment's splice point); HEAD renders raw",
                       active->id));
  }
}

/// Warns of each tool-pairing repair the render made.
void warn_repairs(const RenderCheck& k) {
  for (const auto& rp : k.r.repairs) {
    if (rp.kind == "synthetic_result")
      warn(k.c, k.session, {rp.node},
           fmt::format("tool call '{}' in node '{}' has no result in the rendered context: the render adds a synthetic "
                       "error result",
                       rp.tool_use_id, rp.node));
    else
      warn(k.c, k.session, {rp.node},
           fmt::format("tool result for '{}' in node '{}' has no call in the rendered context: rendered as text",
                       rp.tool_use_id, rp.node));
  }
}

}  // namespace

/// I5 for the render in hr (made by render_head with the same strategy).
void check_render(Store& store, const std::string& session, const Chain& chain, Check& c, const HeadRender& hr,
                  StrategyLabel strategy) {
  const std::size_t v0 = c.violations.size(), w0 = c.warnings.size();
  const Rendered& r = hr.r;
  LcmLabel label{c, v0, w0, strategy == StrategyLabel::lcm};
  // Render warnings (an unapplied summary or fold) are the rolling render's to report, once.
  if (strategy != StrategyLabel::lcm)
    for (const auto& w : r.warnings) warn(c, session, {r.head}, w);

  const RenderCheck k{store, session, chain, c, r};
  const RenderReads reads = sort_reads(k);
  Spine spine = walk_spine(store, chain, r.head, reads.raw);
  check_raw_on_spine(k, reads, spine);
  const std::vector<std::uint32_t> covered_by = check_view_coverage(k, reads, spine);
  check_spine_covered(k, spine, covered_by);
  if (strategy == StrategyLabel::lcm) {
    c.violations.insert(c.violations.end(), hr.pairing.begin(), hr.pairing.end());
    return;
  }
  // An active summary whose whole coverage is on the spine but that the render did not apply.
  check_unapplied_summary(k, spine);
  warn_repairs(k);
  c.violations.insert(c.violations.end(), hr.pairing.begin(), hr.pairing.end());
}

// ---------------------------------------------------------------- I10

namespace {

/// The messages of a render that a later append cannot change: everything except the last
/// message, and except a trailing assistant turn whose tool answers may still arrive. open: per
/// message, whether it is such a turn (PrintBuilder::open_turn).
std::size_t stable_prefix(const std::vector<bool>& open) {
  std::size_t n = open.empty() ? 0 : open.size() - 1;
  while (n > 0 && open[n - 1]) --n;
  return n;
}

/// SHA-256 of the `render` JSON document of r in format f: the bytes I10 compares.
std::string document_digest(const Rendered& r, RenderFormat f) {
  return render_stream(r, f, [](const Json&) {}, true);
}

/// I10's first half: a second render of HEAD gives the bytes of a's `render` documents. False
/// (a violation in c) when the second render fails.
bool check_second_render(Store& store, const std::string& session, const std::string& head, const HeadRender& a,
                         Check& c) {
  Rendered b;
  try {
    b = verify_render(store, session, RenderOptions{});
  } catch (const Error&) {
    add(c, session, {head}, fmt::format("rendering HEAD '{}' failed the second time only", head));
    return false;
  }
  // The bytes `render` prints in each format, compared by digest (the first render may be slimmed).
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const char* name = f == RenderFormat::openai ? "openai" : "anthropic";
    if (document_digest(b, f) != (f == RenderFormat::openai ? a.openai_document : a.anthropic_document))
      add(c, session, {head}, fmt::format("rendering HEAD '{}' twice gave different bytes ({})", head, name));
  }
  return true;
}

}  // namespace

/// I10 for HEAD's render a (render_head, strategy rolling): a second render gives the same bytes,
/// and the render from HEAD's predecessor is a prefix of a's (prompt-cache stability).
void check_determinism(Store& store, const std::string& session, const std::string& head, const HeadRender& a,
                       Check& c) {
  if (!check_second_render(store, session, head, a, c)) return;
  // Prompt-cache stability: the render from HEAD's predecessor is a prefix of HEAD's render.
  auto pred = store.predecessor_of(head);
  if (!pred) return;
  Rendered p;
  try {
    RenderOptions o;
    o.head = *pred;
    p = verify_render(store, session, o);
  } catch (const Error&) {
    return;  // a predecessor outside the session: I2
  }
  auto fold_ids = [](const Rendered& x) {
    std::vector<std::string> ids;
    for (const auto& f : x.folds) ids.push_back(f.id);
    return ids;
  };
  // A different summary state is a different prefix by design.
  if (p.summary != a.r.summary || fold_ids(p) != fold_ids(a.r)) return;
  // A result that arrives late (after other turns) replaces the synthetic result the earlier
  // render carried: the prefix changes by the repair policy, not by a defect in the ledger. The
  // call is named by its node and counted: a tool_use id given to several calls (found by
  // fuzz/import_codex) can leave another call, even of the same node, answered synthetically in
  // both renders.
  std::map<std::pair<std::string, std::string>, int> synthetic;  // (node, tool_use id) -> p's count - a's
  for (const auto& rp : p.repairs)
    if (rp.kind == "synthetic_result") ++synthetic[{rp.node, rp.tool_use_id}];
  for (const auto& rp : a.r.repairs)
    if (rp.kind == "synthetic_result") --synthetic[{rp.node, rp.tool_use_id}];
  const bool late_result =
      std::any_of(synthetic.begin(), synthetic.end(), [](const auto& kv) { return kv.second > 0; });
  // HEAD carries the client's own new system prompt (render's system source "node"): the OpenAI
  // render's leading system message changes by the client's doing (the Anthropic render keeps it
  // apart and still compares every message).
  const bool new_prompt = a.r.system.source == "node" && a.r.system.node == head;
  for (auto f : {RenderFormat::openai, RenderFormat::anthropic}) {
    const char* name = f == RenderFormat::openai ? "openai" : "anthropic";
    PrintBuilder built;
    built.openai = f == RenderFormat::openai;
    built.track_open = true;
    render_stream(p, f, [&](const Json& m) { built.add(m); }, false);
    built.p.system = system_bytes(p, f);
    const BodyPrint& pb = built.p;
    const BodyPrint& hb = f == RenderFormat::openai ? a.openai : a.anthropic;
    const std::vector<std::string>& hm = hb.messages;
    std::size_t n = stable_prefix(built.open);
    // HEAD's new system prompt changes the OpenAI render's leading system messages (their text,
    // or their number when the earlier render had none): a warning, and the messages after them
    // are still compared, each against the one as far from the end of its leading run.
    const auto [skip_p, skip_h] =
        new_prompt && f == RenderFormat::openai ? leading_system_skip(pb, hb) : std::pair<std::size_t, std::size_t>{};
    if (skip_p + skip_h > 0)
      warn(c, session, {head, *pred},
           fmt::format("HEAD '{}' carries the client's new system prompt: the openai render's system message "
                       "differs from the render at '{}' (prompt caches miss once)",
                       head, *pred));
    for (std::size_t i = skip_p; i < n; ++i) {
      // The bytes of each message, compared by digest.
      const std::size_t j = i - skip_p + skip_h;
      if (j >= hm.size() || pb.messages[i] != hm[j]) {
        if (late_result) {
          warn(c, session, {head, *pred},
               fmt::format("HEAD '{}' answers a tool call that the render at '{}' had to answer synthetically; the "
                           "rendered prefix changes from {} message {} on (prompt caches miss once)",
                           head, *pred, name, i));
          break;
        }
        add(c, session, {head, *pred},
            fmt::format("appending HEAD '{}' changed the rendered prefix before it ({} message {} differs from the "
                        "render at '{}'): prompt caches would miss",
                        head, name, i, *pred));
        break;
      }
    }
    // Before the first user or assistant message the leading run of system messages is still
    // open (no request was sendable, so no cache holds it): a system message joins it.
    // A HEAD node the importer marked as where the client's own prompt changed (render's system
    // source "node", docs/render.md "The system prompt") changes it by the client's doing: the
    // render follows the request the client sent, and prompt caches miss once.
    if (f == RenderFormat::anthropic && !pb.messages.empty() && pb.system != hb.system) {
      if (new_prompt)
        warn(c, session, {head, *pred},
             fmt::format("HEAD '{}' carries the client's new system prompt: the rendered system prompt differs from "
                         "the render at '{}' (prompt caches miss once)",
                         head, *pred));
      else
        add(c, session, {head, *pred}, fmt::format("appending HEAD '{}' changed the rendered system prompt", head));
    }
  }
}

}  // namespace ctxfold::verify_detail
