#include "strategies/lcm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "render/render.hpp"
#include "strategies/units.hpp"
#include "summarize/prompt.hpp"
#include "summarize/transcript.hpp"
#include "tokens/calibrate.hpp"
#include "tokens/estimate.hpp"
#include "render/token_figure.hpp"
#include "render/partial.hpp"
#include "util/digest.hpp"

namespace ctxfold {
namespace {

constexpr std::int64_t kLcmMinChunkTokens = 256;
constexpr std::int64_t kMinOutputTokens = 64;
/// A leaf covers at most window / kWindowLeafShare source tokens, so the leaves of one compaction
/// reach the fanout and condense well before their summaries crowd the window.
constexpr std::int64_t kWindowLeafShare = 16;

/// A node of the frontier: a stored fold on HEAD's spine or a summary made by this run.
struct TreeNode {
  std::string id;
  std::int64_t depth = 1;
  std::optional<std::string> predecessor;  // splice point: predecessor of the first covered id
  std::string first, last;                 // covered chain ids
  std::int64_t first_seq = 0, last_seq = 0;
  std::int64_t count = 0;
  std::int64_t seq = 0;  // stored folds: their seq (covers read on demand)
  bool fresh = false;    // made by this run (node below is to be appended)
  Node node;             // fresh: the node; stored: loaded lazily with covers
  bool loaded = false;
};

/// Everything the run needs, frozen at the planning boundary.
struct LcmPlan {
  Rendered r;
  std::string head;
  std::int64_t boundary = 0;
  std::int64_t session_max = 0;
  std::int64_t before = 0;
  std::int64_t window_eff = 0;
  std::int64_t trigger = 0;
  std::int64_t retain_target = 0;
  std::size_t region_start = 0;          // first item after the covered cursor
  std::optional<std::string> cursor;     // last row covered by the newest fold on the spine
  std::optional<std::string> pinned;     // the first user message kept ahead of the first leaf
  std::vector<Unit> units;               // over [region_start, items.size())
  std::size_t cut_unit = 0;              // units[0, cut_unit) are evicted
  std::optional<Calibration> calibration;  // the render's (render/token_figure.hpp token_figure)
  std::int64_t shown_before = 0;           // the labelled figure the trigger is checked on
  std::int64_t extra = 0;                  // what the calibration adds to any estimate
};

struct Chunk {
  std::size_t unit_begin = 0, unit_end = 0;  // units [begin, end)
  std::int64_t tokens = 0;                   // stored tokens of its items (the source size)
};

std::int64_t item_tokens(const Node& n) { return n.tokens > 0 ? n.tokens : estimate_node_tokens(n); }

/// Renders HEAD (lcm) at the current append boundary and checks the trigger. False with
/// status/reason set when the compaction is not due.
bool plan_render(Store& store, const std::string& session, const LcmOptions& opts, LcmPlan& p, CompactResult& res) {
  p.boundary = store.max_seq();
  p.head = plan_head(store, session, p.boundary);
  res.head = p.head;
  p.session_max = session_max_seq(store, session);
  RenderOptions ro;
  ro.head = p.head;
  ro.as_of = p.boundary;
  ro.strategy = "lcm";
  ro.notes = false;
  p.r = render_context(store, session, ro);
  refuse_partial_history(p.r.warnings);
  p.before = p.r.estimated_tokens;
  res.estimated_tokens_before = res.estimated_tokens_after = p.before;
  // The trigger is checked on the labelled figure (calibrated where the session has matched
  // provider usage), as rolling does; `extra` is what the calibration adds to any estimate.
  p.calibration = p.r.tokens.calibration;
  res.tokens_before = p.r.tokens;
  res.tokens_after = res.tokens_before;
  p.shown_before = res.tokens_before.value;
  p.extra = std::max<std::int64_t>(0, p.shown_before - p.before);

  const TriggerCheck t = check_trigger(opts.window, opts.trigger_percent, res.tokens_before, p.before, "lcm");
  p.window_eff = t.window_eff;
  p.trigger = t.trigger;
  if (!t.due && !opts.force) {
    res.status = "noop";
    res.reason = t.reason;
    return false;
  }
  p.retain_target = std::max<std::int64_t>(1, ceil_percent(p.window_eff, opts.tail_percent));
  return true;
}

/// Sets the covered cursor and the region start past the system prompt and the covered prefix;
/// returns the end of the system prompt.
std::size_t find_covered_prefix(LcmPlan& p) {
  // The covered cursor: the last row the newest fold on the spine covers.
  const auto& items = p.r.items;
  std::size_t sys_end = 0;
  while (sys_end < items.size() && items[sys_end].is_model_input() && items[sys_end].role == role::kSystem) ++sys_end;
  p.region_start = sys_end;
  // The covered prefix the render starts from: another strategy's active summary (the imported
  // compaction summary, a rolling summary) then lcm's own folds past it; new leaves start after
  // the newest of them, so a summary is never summarized again (docs/strategies.md "lcm").
  if (p.r.summary)
    for (std::size_t i = 0; i < items.size(); ++i)
      if (items[i].id == *p.r.summary) {
        p.region_start = i + 1;
        if (auto c = items[i].metadata.find("covers"); c != items[i].metadata.end() && c->is_object())
          p.cursor = json_str(*c, "last");
      }
  if (!p.r.folds.empty()) {
    p.cursor = p.r.folds.back().last;
    for (std::size_t i = 0; i < items.size(); ++i)
      if (items[i].id == p.r.folds.back().id) p.region_start = i + 1;
  }
  return sys_end;
}

/// Nothing covered yet: the first user message (the task statement, with any harness records
/// before it) stays verbatim ahead of the leaves when it is at most a tenth of the window
/// (docs/strategies.md "Hard cases": the first user message is kept); a larger one is summarized
/// like the rest.
void pin_first_user_message(LcmPlan& p, std::size_t sys_end) {
  const auto& items = p.r.items;
  const std::int64_t pin_cap = p.window_eff > 0 ? std::max<std::int64_t>(1, p.window_eff / 10) : 2000;
  std::int64_t pinned = 0;
  for (std::size_t i = sys_end; i < items.size(); ++i) {
    pinned += p.r.item_tokens[i];
    if (pinned > pin_cap || items[i].role == role::kAssistant) break;
    if (starts_user_turn(items[i])) {
      p.region_start = i + 1;
      p.pinned = items[i].id;
      break;
    }
  }
}

/// A calibrated remainder (what the provider counts beyond the transcript) leaves less room for
/// the tail: cap it so remainder + system + the folds kept + `fanout` new top nodes + tail stays
/// under the trigger. Returns the room (unbounded without a remainder or a window).
std::int64_t cap_tail_room(const LcmOptions& opts, std::int64_t max_output, LcmPlan& p) {
  std::int64_t tail_room = std::numeric_limits<std::int64_t>::max();
  if (p.extra > 0 && opts.window) {
    std::int64_t kept = 0;
    for (std::size_t i = 0; i < p.region_start; ++i) kept += p.r.item_tokens[i];
    tail_room = p.trigger - 1 - p.extra - kept - static_cast<std::int64_t>(opts.fanout) * max_output;
    p.retain_target = std::max<std::int64_t>(1, std::min(p.retain_target, tail_room));
  }
  return tail_room;
}

/// Retention walk, tail to head: the latest unit always stays verbatim, and the tail starts at
/// the latest user message when that fits (units.hpp retained_tail_start, shared with rolling).
/// False with status/reason set when no unit can be evicted.
bool choose_cut(const LcmOptions& opts, std::int64_t tail_room, LcmPlan& p, CompactResult& res) {
  p.cut_unit = retained_tail_start(p.units, p.retain_target,
                                   opts.window ? std::min(p.trigger - 1 - p.extra, tail_room) : tail_room);
  if (p.cut_unit == 0) {
    const bool over = opts.window && p.shown_before >= p.trigger;
    res.status = over || opts.force ? "declined" : "noop";
    if (p.units.empty())
      res.reason = "nothing after the covered cursor to compact";
    else if (p.units.size() == 1)
      res.reason = fmt::format("the only unit after the covered cursor ({} tokens) stays in the verbatim tail: the "
                               "latest unit is never summarized and a unit is never split",
                               p.units[0].tokens);
    else
      res.reason = fmt::format("every unit after the covered cursor is needed for the retained tail of {} tokens",
                               p.retain_target);
    return false;
  }
  return true;
}

/// The plan: render (lcm), trigger, cursor, retention walk. False with status/reason set when
/// there is nothing to do.
bool make_plan(Store& store, const std::string& session, const LcmOptions& opts, std::int64_t max_output, LcmPlan& p,
               CompactResult& res) {
  if (!plan_render(store, session, opts, p, res)) return false;
  const std::size_t sys_end = find_covered_prefix(p);
  if (!p.cursor && p.region_start == sys_end) pin_first_user_message(p, sys_end);
  p.units = split_units(p.r.items, p.region_start);
  const std::int64_t tail_room = cap_tail_room(opts, max_output, p);
  return choose_cut(opts, tail_room, p, res);
}

std::string unit_text(const std::vector<Node>& items, const Unit& u, const TranscriptOptions& topts) {
  std::string out;
  for (std::size_t i = u.begin; i < u.end; ++i) {
    std::string t = node_transcript(items[i], topts);
    if (t.empty()) continue;
    if (!out.empty()) out += "\n\n";
    out += t;
  }
  return out;
}

/// What one summary call (with its retry and pointer fallback) produced.
struct Made {
  std::string text;
  bool pointer = false;
  std::optional<Error> failure;  // the call failed: nothing made
  bool too_small = false;        // not even a pointer is smaller than the source
  int calls = 0;
  Json usage = Json::array();
  std::string input_digest;
};

/// Summarizes `transcript` (source_tokens: what the summary stands in for) into a node text whose
/// node estimate is below source_tokens: the answer, else one retry at half the output limit,
/// else the pointer text (docs/strategies.md "lcm").
Made summarize_one(Summarizer& summarizer, const LcmOptions& opts, const std::string& transcript, const char* prompt,
                   std::int64_t max_output, std::int64_t source_tokens, const std::string& pointer, int calls_left) {
  Made m;
  auto node_tokens = [](const std::string& text) {
    Node n;
    n.kind = kind::kSummary;
    n.role = role::kUser;
    n.content = Json::array({Json{{"type", "text"}, {"text", text}}});
    return estimate_node_tokens(n);
  };
  Sha256 digest;
  digest.update(prompt);
  digest.update(std::string_view("\0", 1));
  digest.update(transcript);
  digest.update(std::string_view("\0", 1));
  digest.update(opts.instructions);
  m.input_digest = digest.hex();
  if (!transcript.empty()) {
    std::int64_t limit = max_output;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (m.calls >= calls_left) {
        m.failure = Error(Exit::environment, "summarizer.calls",
                          "the summarizer call limit (--max-calls) was reached; run compact again for the rest");
        return m;
      }
      SummaryRequest req;
      req.transcript = transcript;
      req.instructions = opts.instructions;
      req.max_output_tokens = limit;
      req.input_tokens = estimate_text_tokens(transcript);
      req.prompt_version = prompt;
      ++m.calls;
      SummaryResult out;
      try {
        out = summarizer.summarize(req);
      } catch (const Error& e) {
        m.failure = e;
        return m;
      }
      std::string text = out.text;
      if (auto bad = clean_summary_text(text)) {
        m.failure = *bad;
        return m;
      }
      if (!out.usage.empty()) m.usage.push_back(out.usage);
      if (node_tokens(text) < source_tokens) {
        m.text = std::move(text);
        return m;
      }
      limit = std::max<std::int64_t>(kMinOutputTokens, limit / 2);
    }
  }
  if (node_tokens(pointer) < source_tokens) {
    m.text = pointer;
    m.pointer = true;
  } else {
    m.too_small = true;
  }
  return m;
}

Json provenance_json(const Summarizer& summarizer, const LcmOptions& opts, const char* prompt, const Made& m,
                     std::int64_t max_output, std::int64_t chunk_tokens) {
  Json p{{"summarizer", {{"kind", summarizer.kind()}, {"model", summarizer.model()}}},
         {"prompt_version", prompt},
         {"input_digest", m.input_digest},
         {"parameters",
          {{"window", opts.window ? Json(*opts.window) : Json(nullptr)},
           {"trigger_percent", opts.trigger_percent},
           {"tail_percent", opts.tail_percent},
           {"fanout", opts.fanout},
           {"leaf_chunk_tokens", chunk_tokens},
           {"max_output_tokens", max_output},
           {"instructions", opts.instructions},
           {"force", opts.force}}},
         {"calls", m.calls}};
  if (!m.usage.empty()) p["usage"] = m.usage;
  return p;
}

std::string pointer_text(const std::string& id, std::int64_t count, const std::string& first, const std::string& last) {
  return fmt::format("[source pointer: no summary smaller than the source was produced; the {} covered rows {} … {} "
                     "are kept verbatim: `ctxfold expand {}`]",
                     count, first, last, id);
}


Json or_null(const std::optional<std::string>& s) { return s ? Json(*s) : Json(nullptr); }

/// Chunk and output sizes of one run.
struct Sizes {
  std::int64_t swindow = 0;       // the summarizer window chunks are sized against
  std::int64_t input_budget = 0;  // transcript tokens one call may take
  std::int64_t chunk_tokens = 0;  // source tokens per leaf
  std::int64_t max_output = 0;    // output limit of one summary
  int cap = 0;                    // summarizer_call_cap
};

Sizes lcm_sizes(const Summarizer& summarizer, const LcmOptions& opts) {
  Sizes z;
  // Chunk sizes: leaf_chunk_tokens of source, at most a sixteenth of the conversation window, and the
  // transcript within half the summarizer window.
  z.swindow = opts.summarizer_window > 0 ? opts.summarizer_window : summarizer.window_tokens();
  const std::int64_t overhead = estimate_text_tokens(embedded_prompt(kLcmLeafPrompt)) +
                                estimate_text_tokens(opts.instructions) + 64;
  z.input_budget = z.swindow / 2 - overhead;
  z.chunk_tokens = std::min(opts.leaf_chunk_tokens, z.input_budget);
  if (opts.window && *opts.window > 0)
    z.chunk_tokens = std::min(z.chunk_tokens, std::max(kLcmMinChunkTokens, *opts.window / kWindowLeafShare));
  z.max_output = opts.max_output_tokens > 0 ? opts.max_output_tokens
                                            : std::clamp<std::int64_t>(z.chunk_tokens / 8, 256, 2048);
  z.cap = summarizer_call_cap(opts, summarizer, kLcmRemoteCallCap);
  return z;
}

/// The evicted units packed in order into chunks, and where the kept tail starts.
struct Eviction {
  std::vector<Chunk> chunks;
  std::int64_t tokens = 0;   // stored tokens of the evicted items
  std::size_t cut_item = 0;  // the first item of the kept tail
};

Eviction pack_chunks(const LcmPlan& p, std::int64_t chunk_tokens) {
  const auto& items = p.r.items;
  Eviction ev;
  for (std::size_t u = 0; u < p.cut_unit; ++u) {
    std::int64_t t = 0;
    for (std::size_t i = p.units[u].begin; i < p.units[u].end; ++i) t += item_tokens(items[i]);
    ev.tokens += t;
    if (ev.chunks.empty() || ev.chunks.back().tokens + t > chunk_tokens) ev.chunks.push_back(Chunk{u, u, 0});
    ev.chunks.back().unit_end = u + 1;
    ev.chunks.back().tokens += t;
  }
  ev.cut_item = p.cut_unit < p.units.size() ? p.units[p.cut_unit].begin : items.size();
  return ev;
}

/// What the tree will need, without calling the summarizer (--dry-run, docs/strategies.md
/// "Summarizer calls at scale"): a leaf per chunk, its input the chunk's transcript (at most the
/// input budget); the parents the condensation makes over the frontier (the stored folds'
/// depths, then the new leaves, taken as adjacent), each with `fanout` children of at most
/// max_output tokens. The cap check is on the total.
Json plan_calls(const LcmPlan& p, const Eviction& ev, const Sizes& sz, const LcmOptions& opts) {
  std::int64_t input = 0;
  for (const Chunk& ch : ev.chunks) input += std::min(ch.tokens, sz.input_budget);
  std::vector<std::int64_t> depths;
  for (const auto& f : p.r.folds) depths.push_back(f.depth);
  depths.insert(depths.end(), ev.chunks.size(), 1);
  std::int64_t parents = 0, depth = ev.chunks.empty() ? 0 : 1;
  const std::size_t fan = static_cast<std::size_t>(opts.fanout);
  for (bool again = true; again;) {
    again = false;
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < depths.size();) {
      std::size_t j = i + 1;
      while (j < depths.size() && depths[j] == depths[i]) ++j;
      if (j - i >= fan && (!best || depths[i] < depths[*best])) best = i;
      i = j;
    }
    if (!best) break;
    const std::int64_t d = depths[*best] + 1;
    depths.erase(depths.begin() + static_cast<std::ptrdiff_t>(*best), depths.begin() + static_cast<std::ptrdiff_t>(*best + fan));
    depths.insert(depths.begin() + static_cast<std::ptrdiff_t>(*best), d);
    ++parents;
    input += std::min(static_cast<std::int64_t>(fan) * sz.max_output, sz.input_budget);
    depth = std::max(depth, d);
    again = true;
  }
  const std::int64_t calls = static_cast<std::int64_t>(ev.chunks.size()) + parents;
  return Json{{"calls", calls},
              {"leaf_calls", ev.chunks.size()},
              {"merge_calls", parents},
              {"depth", depth},
              {"input_tokens", input},
              {"chunk_tokens", sz.chunk_tokens},
              {"call_cap", sz.cap == std::numeric_limits<int>::max() ? Json(nullptr) : Json(sz.cap)},
              {"within_cap", calls <= sz.cap},
              {"estimated", "leaves from the chunks' source tokens; parents assume fanout answers at the output limit"}};
}

/// --dry-run: status "planned" and the plan of what would be summarized and kept.
void plan_only(const LcmPlan& p, const Eviction& ev, std::int64_t chunk_tokens, CompactResult& res) {
  const auto& items = p.r.items;
  const std::size_t cut_item = ev.cut_item;
  std::int64_t kept = 0;
  for (std::size_t i = cut_item; i < items.size(); ++i) kept += item_tokens(items[i]);
  res.status = "planned";
  res.reason = fmt::format("would summarize {} units ({} tokens) into {} leaves and keep {} items as the tail",
                           p.cut_unit, ev.tokens, ev.chunks.size(), items.size() - cut_item);
  res.details["cursor"]["after"] = res.details["cursor"]["before"];
  res.plan = Json{{"trigger_tokens", p.trigger},
                  {"retain_tokens", p.retain_target},
                  {"window", p.window_eff},
                  {"cursor", or_null(p.cursor)},
                  {"evicted_units", p.cut_unit},
                  {"evicted_items", cut_item - p.region_start},
                  {"evicted_tokens", ev.tokens},
                  {"chunks", ev.chunks.size()},
                  {"chunk_tokens", chunk_tokens},
                  {"kept_first", cut_item < items.size() ? Json(items[cut_item].id) : Json(nullptr)},
                  {"kept_items", items.size() - cut_item},
                  {"kept_tokens", kept},
                  {"units", p.units.size()}};
}

/// One run after compact/start: its inputs, the frontier and what it made so far.
struct Run {
  Store& store;
  const std::string& session;
  Summarizer& summarizer;
  const LcmOptions& opts;
  const Sizes& sz;
  const LcmPlan& p;
  CompactionBracket& bracket;
  CompactResult& res;
  int made_count = 0;
  std::vector<TreeNode> frontier{};
  std::vector<Node> fresh{};  // in creation order
  std::vector<Json> fresh_records{};
  std::optional<Error> failure{};
  std::string stop_reason{};
  std::optional<std::string> cursor{};
  std::vector<std::string> leaf_ids{}, parent_ids{};
  std::int64_t covered_count = 0;
  std::optional<std::string> covered_first{};

  std::string next_id() { return fmt::format("lcm-{}-{}", bracket.hex(), ++made_count); }
};

/// The frontier: the stored folds on HEAD's spine, then what this run makes.
void load_frontier(Run& run) {
  for (const auto& f : run.p.r.folds) {
    TreeNode t;
    t.id = f.id;
    t.depth = f.depth;
    t.first = f.first;
    t.last = f.last;
    t.first_seq = f.first_seq;
    t.last_seq = f.last_seq;
    t.count = f.count;
    auto n = run.store.node(f.id, false);
    if (n) {
      t.seq = n->seq;
      t.predecessor = n->predecessor;
    }
    run.frontier.push_back(std::move(t));
  }
}

/// A summary node of this run: the text as content, the lcm metadata and the covered ids.
Node summary_node(const Run& run, const std::string& id, const std::optional<std::string>& predecessor,
                  const std::string& text) {
  Node s;
  s.id = id;
  s.session = run.session;
  s.kind = kind::kSummary;
  s.role = role::kUser;
  s.predecessor = predecessor;
  s.content = Json::array({Json{{"type", "text"}, {"text", text}}});
  return s;
}

/// Summarizes one chunk into a leaf. False when the leaves stop here (a failure, or a chunk too
/// small for a summary or a pointer).
bool make_leaf(Run& run, const Chunk& ch) {
  const LcmPlan& p = run.p;
  const auto& items = p.r.items;
  const std::int64_t bound = p.r.spine_length + 2;
  const std::size_t ib = p.units[ch.unit_begin].begin, ie = p.units[ch.unit_end - 1].end;
  std::string transcript;
  for (std::size_t u = ch.unit_begin; u < ch.unit_end; ++u) {
    std::string t = unit_text(items, p.units[u], run.summarizer.transcript_options());
    if (t.empty()) continue;
    transcript += (transcript.empty() ? "" : "\n\n") + t;
  }
  if (estimate_text_tokens(transcript) > run.sz.input_budget)
    transcript = shorten_middle(transcript, static_cast<std::size_t>(run.sz.input_budget) * 4);
  std::vector<std::string> covers =
      chain_segment(run.store, items[ie - 1].id, run.cursor ? run.cursor : p.pinned,
                    run.cursor || p.pinned ? std::nullopt : std::optional<std::string>(items[ib].id), bound);
  const std::string id = run.next_id();
  Made m = summarize_one(run.summarizer, run.opts, transcript, kLcmLeafPrompt, run.sz.max_output, ch.tokens,
                         pointer_text(id, static_cast<std::int64_t>(covers.size()), covers.front(), covers.back()),
                         run.sz.cap - run.res.calls);
  run.res.calls += m.calls;
  if (m.failure) {
    run.failure = m.failure;
    --run.made_count;
    return false;
  }
  if (m.too_small) {
    run.stop_reason = fmt::format("the last {} units ({} tokens) are too small for a summary or a source pointer and "
                                  "stay in the tail",
                                  ch.unit_end - ch.unit_begin, ch.tokens);
    --run.made_count;
    return false;
  }
  Node s = summary_node(run, id, run.store.predecessor_of(covers.front()), m.text);
  const std::int64_t first_seq = items[ib].seq, last_seq = items[ie - 1].seq;
  s.metadata = Json{{"strategy", "lcm"},
                    {"origin", "compact"},
                    {"compaction", run.bracket.id()},
                    {"depth", 1},
                    {"children", Json::array()},
                    {"lcm", {{"kind", "leaf"}, {"pointer", m.pointer}, {"source_tokens", ch.tokens}}},
                    {"provenance", provenance_json(run.summarizer, run.opts, kLcmLeafPrompt, m, run.sz.max_output,
                                                   run.sz.chunk_tokens)}};
  if (p.calibration) s.metadata["calibration"] = p.calibration->to_json();
  s.covers_ids = covers;
  TreeNode t;
  t.id = id;
  t.depth = 1;
  t.predecessor = s.predecessor;
  t.first = covers.front();
  t.last = covers.back();
  t.first_seq = first_seq;
  t.last_seq = last_seq;
  t.count = static_cast<std::int64_t>(covers.size());
  t.fresh = true;
  t.loaded = true;
  run.fresh_records.push_back(
      Json{{"kind", "leaf"},
           {"provenance", s.metadata["provenance"]},
           {"raw_summary", m.text},
           {"pointer", m.pointer},
           {"covers", {{"count", covers.size()}, {"first", covers.front()}, {"last", covers.back()}}},
           {"estimated_tokens", estimate_node_tokens(s)},
           {"replaced_tokens", ch.tokens}});
  t.node = s;
  run.fresh.push_back(std::move(s));
  run.frontier.push_back(std::move(t));
  run.leaf_ids.push_back(id);
  if (!run.covered_first) run.covered_first = covers.front();
  run.covered_count += static_cast<std::int64_t>(covers.size());
  run.cursor = covers.back();
  return true;
}

void load(Store& store, TreeNode& t) {
  if (t.loaded) return;
  if (auto n = store.node(t.id, true)) t.node = std::move(*n);
  t.node.metadata.erase("covers");
  t.loaded = true;
}

/// The start of the oldest run of `fanout` adjacent frontier siblings on the lowest level holding one.
std::optional<std::size_t> condensable(const std::vector<TreeNode>& frontier, int fanout) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < frontier.size();) {
    std::size_t j = i + 1;
    while (j < frontier.size() && frontier[j].depth == frontier[i].depth &&
           frontier[j].predecessor == std::optional<std::string>(frontier[j - 1].last))
      ++j;
    if (j - i >= static_cast<std::size_t>(fanout) && (!best || frontier[i].depth < frontier[*best].depth)) best = i;
    i = j;
  }
  return best;
}

/// Condenses frontier[b, b + fanout) into a parent that replaces them on the frontier. False when
/// the condensation stops (a failure, or no summary or pointer smaller than the children).
bool condense_at(Run& run, std::size_t b) {
  auto& frontier = run.frontier;
  const std::size_t e = b + static_cast<std::size_t>(run.opts.fanout);
  std::string transcript;
  std::int64_t source_tokens = 0;
  std::vector<std::string> covers, children;
  for (std::size_t i = b; i < e; ++i) {
    load(run.store, frontier[i]);
    const Node& child = frontier[i].node;
    transcript += fmt::format("{}[summary {} of rows {} … {}]\n{}", transcript.empty() ? "" : "\n\n", child.id,
                              frontier[i].first, frontier[i].last, node_text(child));
    source_tokens += item_tokens(child);
    covers.insert(covers.end(), child.covers_ids.begin(), child.covers_ids.end());
    children.push_back(child.id);
  }
  if (estimate_text_tokens(transcript) > run.sz.input_budget)
    transcript = shorten_middle(transcript, static_cast<std::size_t>(run.sz.input_budget) * 4);
  const std::string id = run.next_id();
  Made m = summarize_one(run.summarizer, run.opts, transcript, kLcmCondensePrompt, run.sz.max_output, source_tokens,
                         pointer_text(id, static_cast<std::int64_t>(covers.size()), covers.front(), covers.back()),
                         run.sz.cap - run.res.calls);
  run.res.calls += m.calls;
  if (m.failure || m.too_small) {
    if (m.failure) run.failure = m.failure;
    --run.made_count;
    return false;
  }
  const std::int64_t depth = frontier[b].depth + 1;
  Node s = summary_node(run, id, frontier[b].predecessor, m.text);
  s.metadata = Json{{"strategy", "lcm"},
                    {"origin", "compact"},
                    {"compaction", run.bracket.id()},
                    {"depth", depth},
                    {"children", children},
                    {"lcm", {{"kind", "parent"}, {"pointer", m.pointer}, {"source_tokens", source_tokens}}},
                    {"provenance", provenance_json(run.summarizer, run.opts, kLcmCondensePrompt, m, run.sz.max_output,
                                                   run.sz.chunk_tokens)}};
  if (run.p.calibration) s.metadata["calibration"] = run.p.calibration->to_json();
  s.covers_ids = covers;
  TreeNode t;
  t.id = id;
  t.depth = depth;
  t.predecessor = s.predecessor;
  t.first = frontier[b].first;
  t.last = frontier[e - 1].last;
  t.first_seq = frontier[b].first_seq;
  t.last_seq = frontier[e - 1].last_seq;
  t.count = static_cast<std::int64_t>(covers.size());
  t.fresh = true;
  t.loaded = true;
  run.fresh_records.push_back(
      Json{{"kind", "parent"},
           {"provenance", s.metadata["provenance"]},
           {"raw_summary", m.text},
           {"pointer", m.pointer},
           {"children", children},
           {"covers", {{"count", covers.size()}, {"first", covers.front()}, {"last", covers.back()}}},
           {"estimated_tokens", estimate_node_tokens(s)},
           {"replaced_tokens", source_tokens}});
  t.node = s;
  run.fresh.push_back(std::move(s));
  run.parent_ids.push_back(id);
  frontier.erase(frontier.begin() + static_cast<std::ptrdiff_t>(b), frontier.begin() + static_cast<std::ptrdiff_t>(e));
  frontier.insert(frontier.begin() + static_cast<std::ptrdiff_t>(b), std::move(t));
  return true;
}

/// Nothing was made: the attempt failed (or was declined) and only the bracket's end is written.
void fail_empty(Run& run) {
  CompactResult& res = run.res;
  Error e = run.failure ? *run.failure
                        : Error(Exit::environment, "compact.not_reducing",
                                run.stop_reason.empty() ? std::string("nothing could be summarized") : run.stop_reason);
  fail_result(res, e);
  if (!run.failure) res.status = "declined";
  run.bracket.fail(e, res.calls,
                   Json{{"strategy", "lcm"},
                        {"cursor_before", or_null(run.p.cursor)},
                        {"cursor", or_null(run.p.cursor)}});
}

/// The bracket's commit of everything made; the source-changed error when HEAD or the session moved.
std::optional<Error> commit_fresh(Run& run, bool partial) {
  const auto& failure = run.failure;
  return run.bracket.commit(
      [&] {
        for (std::size_t i = 0; i < run.fresh.size(); ++i)
          run.bracket.append_summary(run.fresh[i], run.fresh_records[i]);
      },
      run.res.calls,
      Json{{"strategy", "lcm"},
           {"summary_id", run.fresh.back().id},
           {"leaves", run.leaf_ids},
           {"parents", run.parent_ids},
           {"cursor_before", or_null(run.p.cursor)},
           {"cursor", or_null(run.cursor)},
           {"partial", partial},
           {"error", failure ? Json{{"code", failure->code()}, {"message", failure->what()}} : Json(nullptr)}});
}

/// The result of a committed run, with the figures of the render after it.
void report_compacted(Run& run, bool partial, const std::vector<Chunk>& chunks) {
  const std::size_t chunk_count = chunks.size();
  CompactResult& res = run.res;
  res.status = "compacted";
  res.summary_id = run.fresh.back().id;
  res.partial = partial;
  res.covers_count = run.covered_count;
  res.covers_first = run.covered_first;
  res.covers_last = run.cursor;
  res.details["leaves"] = run.leaf_ids;
  res.details["parents"] = run.parent_ids;
  if (partial) {
    // What waits: the units of the chunks no committed leaf covers.
    const std::size_t made = run.leaf_ids.size();
    const std::size_t done_units = made == 0 ? 0 : chunks[made - 1].unit_end;
    res.remaining_units = static_cast<std::int64_t>(run.p.cut_unit - done_units);
    for (std::size_t k = made; k < chunks.size(); ++k) res.remaining_tokens += chunks[k].tokens;
  }
  if (run.failure) {
    res.error_code = run.failure->code();
    res.reason = fmt::format("partial: {} of {} leaves and {} parents made before a summary failed: {}",
                             run.leaf_ids.size(), chunk_count, run.parent_ids.size(), run.failure->what());
  } else if (!run.stop_reason.empty()) {
    res.reason = run.stop_reason;
  }
  RenderOptions after;
  after.strategy = "lcm";
  after.notes = false;
  Rendered r2 = render_context(run.store, run.session, after);
  res.estimated_tokens_after = r2.estimated_tokens;
  res.tokens_after = r2.tokens;
  if (!partial && run.opts.window && res.tokens_after.value >= run.p.trigger)
    res.reason = fmt::format("still {} {} tokens after compaction: the verbatim tail (never split inside a unit) and "
                             "the tree's top nodes exceed the trigger of {} tokens",
                             res.tokens_after.kind, res.tokens_after.value, run.p.trigger);
}

/// Leaves, condensation and the commit, after compact/start.
void run_tree(Run& run, const std::vector<Chunk>& chunks) {
  load_frontier(run);
  run.cursor = run.p.cursor;
  // 1. Leaves, oldest chunk first; a failure stops here and keeps what is done.
  for (const Chunk& ch : chunks)
    if (!make_leaf(run, ch)) break;
  // 2. Condensation: the lowest level holding `fanout` adjacent siblings, oldest first.
  while (!run.failure) {
    const std::optional<std::size_t> best = condensable(run.frontier, run.opts.fanout);
    if (!best) break;
    if (!condense_at(run, *best)) break;
  }

  CompactResult& res = run.res;
  const Json cursor_json{{"before", or_null(run.p.cursor)}, {"after", or_null(run.cursor)}};
  res.details["cursor"] = cursor_json;
  if (run.fresh.empty()) return fail_empty(run);
  const bool partial = run.failure.has_value();
  if (auto changed = commit_fresh(run, partial)) {
    fail_result(res, *changed);
    res.details["cursor"]["after"] = cursor_json["before"];
    return;
  }
  report_compacted(run, partial, chunks);
}

}  // namespace

void validate_lcm_options(const LcmOptions& o) {
  validate_compaction_options(o);
  if (o.fanout < 2 || o.fanout > 64) throw Error(Exit::usage, "compact.options", "--fanout must be between 2 and 64");
  if (o.leaf_chunk_tokens < kLcmMinChunkTokens)
    throw Error(Exit::usage, "compact.options", fmt::format("--leaf-chunk-tokens must be at least {}", kLcmMinChunkTokens));
}

void apply_lcm_config(const Json& config, LcmOptions& opts) {
  Json sec = apply_compaction_config(config, "lcm", opts);
  if (auto v = config_int(sec, "lcm", "fanout", 2, 64)) opts.fanout = static_cast<int>(*v);
  if (auto v = config_int(sec, "lcm", "leafChunkTokens", kLcmMinChunkTokens, 10000000)) opts.leaf_chunk_tokens = *v;
}

CompactResult compact_lcm(Store& store, const std::string& session, Summarizer& summarizer, const LcmOptions& opts) {
  validate_lcm_options(opts);
  CompactResult res;
  res.strategy = "lcm";
  res.session = session;
  res.summarizer_kind = summarizer.kind();
  res.summarizer_model = summarizer.model();
  res.window = opts.window;
  res.passes = 1;
  const Sizes sz = lcm_sizes(summarizer, opts);
  LcmPlan p;
  if (!make_plan(store, session, opts, sz.max_output, p, res)) return res;

  const Eviction ev = pack_chunks(p, sz.chunk_tokens);
  res.details = Json{{"cursor", {{"before", or_null(p.cursor)}, {"after", nullptr}}},
                     {"chunk_tokens", sz.chunk_tokens},
                     {"evicted_tokens", ev.tokens},
                     {"evicted_units", p.cut_unit},
                     {"fanout", opts.fanout},
                     {"pinned", or_null(p.pinned)},
                     {"leaves", Json::array()},
                     {"parents", Json::array()}};
  if (opts.dry_run) {
    plan_only(p, ev, sz.chunk_tokens, res);
    res.plan["summarizer"] = plan_calls(p, ev, sz, opts);
    res.reason += fmt::format(", in {} summarizer calls ({} input tokens){}", res.plan["summarizer"]["calls"].get<std::int64_t>(),
                              res.plan["summarizer"]["input_tokens"].get<std::int64_t>(),
                              res.plan["summarizer"]["within_cap"].get<bool>()
                                  ? std::string()
                                  : fmt::format("; the call cap of {} stops it before the end (partial)", sz.cap));
    return res;
  }
  if (sz.input_budget < kLcmMinChunkTokens) {
    Error e(Exit::environment, "summarizer.window",
            fmt::format("the summarizer window of {} tokens leaves no room for a chunk", sz.swindow),
            "use a summarizer with a larger window or --summarizer-window");
    fail_result(res, e);
    return res;
  }

  CompactionBracket bracket(store, session, p.head, p.session_max, opts.env);
  res.compaction = bracket.id();
  bracket.start(Json{{"strategy", "lcm"},
                     {"boundary_seq", p.boundary},
                     {"cursor", or_null(p.cursor)},
                     {"plan", {{"chunks", ev.chunks.size()}, {"evicted_units", p.cut_unit}, {"evicted_tokens", ev.tokens}}},
                     {"estimated_tokens_before", p.before},
                     {"summarizer", {{"kind", summarizer.kind()}, {"model", summarizer.model()}}}});
  Run run{store, session, summarizer, opts, sz, p, bracket, res};
  run_tree(run, ev.chunks);
  return res;
}

}  // namespace ctxfold
