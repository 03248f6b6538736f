#include "strategies/rolling_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "model/strategy_label.hpp"
#include "render/recap.hpp"
#include "summarize/prompt.hpp"
#include "summarize/transcript.hpp"
#include "tokens/estimate.hpp"
#include "util/digest.hpp"

namespace ctxfold {
namespace {

using rolling_parts::Plan;

constexpr double kMaxCallRatio = 0.9;       // an answer over 90% of its input is non-reducing
constexpr std::int64_t kMinChunkTokens = 256;

std::string unit_text(const Plan& p, const Unit& u, const TranscriptOptions& topts) {
  std::string out;
  for (std::size_t i = u.begin; i < u.end; ++i) {
    std::string t = node_transcript(p.items[i], topts);
    if (t.empty()) continue;
    if (!out.empty()) out += "\n\n";
    out += t;
  }
  return out;
}

/// The transcript of the evicted units from `next` that fit `budget` tokens; `end` is set past
/// the last unit taken.
std::string chunk_transcript(const Plan& p, const Summarizer& summarizer, std::size_t next, std::int64_t budget,
                             std::size_t& end) {
  const std::size_t evicted = p.cut_unit;
  std::string transcript;
  end = next;
  std::int64_t used = 0;
  while (end < evicted) {
    std::string t = unit_text(p, p.units[end], summarizer.transcript_options());
    std::int64_t tt = estimate_text_tokens(t) + 1;
    if (used + tt > budget) {
      if (end == next) {
        // One unit larger than a chunk: its text is shortened (head and tail kept), never split
        // from its tool pairs.
        t = shorten_middle(t, static_cast<std::size_t>(budget - used) * 4);
        transcript += (transcript.empty() ? "" : "\n\n") + t;
        ++end;
      }
      break;
    }
    transcript += (transcript.empty() ? "" : "\n\n") + t;
    used += tt;
    ++end;
  }
  return transcript;
}

/// The request for one chunk, the summary carried in; its inputs are added to `digest`.
SummaryRequest chunk_request(const std::string& carried, const std::string& transcript, const RollingOptions& opts,
                             std::int64_t max_output, Sha256& digest) {
  SummaryRequest req;
  req.previous_summary = carried;
  req.transcript = transcript;
  req.instructions = opts.instructions;
  req.max_output_tokens = max_output;
  req.input_tokens = estimate_text_tokens(req.previous_summary) + estimate_text_tokens(req.transcript);
  req.prompt_version = std::string(kDefaultPromptVersion);
  digest.update(req.previous_summary);
  digest.update(std::string_view("\0", 1));
  digest.update(req.transcript);
  digest.update(std::string_view("\0", 1));
  digest.update(req.instructions);
  digest.update(std::string_view("\0", 1));
  return req;
}

/// Rejects an answer of out_tokens that is over 90% of its input or over twice the output budget.
std::optional<Error> oversized_answer(std::int64_t out_tokens, std::int64_t input_tokens, std::int64_t max_output) {
  if (static_cast<double>(out_tokens) > kMaxCallRatio * static_cast<double>(input_tokens))
    return Error(Exit::environment, "summarizer.not_reducing",
                 fmt::format("the summary of {} tokens is not smaller than 90% of its {}-token input; rejected, "
                             "not retried",
                             out_tokens, input_tokens));
  if (out_tokens > 2 * max_output)
    return Error(Exit::environment, "summarizer.oversized",
                 fmt::format("the summary of {} tokens exceeds twice the output budget of {} tokens", out_tokens,
                             max_output));
  return std::nullopt;
}

}  // namespace

namespace rolling_parts {

// The summary view node standing in for `covers` (docs/model.md "View nodes"): role user, its
// predecessor the splice point (the predecessor of the first covered node), the framed summary text
// as content. The caller adds metadata and covers_ids.
Node summary_node(Store& store, const std::string& session, const std::string& id,
                  const std::vector<std::string>& covers, const std::string& summary) {
  Node s;
  s.id = id;
  s.session = session;
  s.kind = kind::kSummary;
  s.role = role::kUser;
  s.predecessor = store.predecessor_of(covers.front());
  s.content = Json::array({Json{{"type", "text"}, {"text", frame_summary(summary)}}});
  return s;
}

// A summary must be smaller than what it replaces: the refusal both passes give.
Error summary_not_smaller(std::int64_t summary_tokens, std::int64_t replaced) {
  return Error(Exit::environment, "compact.not_reducing",
               fmt::format("the summary ({} tokens) is not smaller than the {} tokens it replaces", summary_tokens,
                           replaced));
}

// The compact/summary event's payload: what produced the summary, its raw text, its coverage and
// its size against what it replaces.
Json summary_event(const Json& provenance, const std::string& raw_summary, const std::vector<std::string>& covers,
                   std::int64_t summary_tokens, std::int64_t replaced) {
  return Json{{"provenance", provenance},
              {"raw_summary", raw_summary},
              {"covers", {{"count", covers.size()}, {"first", covers.front()}, {"last", covers.back()}}},
              {"estimated_tokens", summary_tokens},
              {"replaced_tokens", replaced}};
}

std::int64_t items_tokens(const std::vector<Node>& items, std::size_t b, std::size_t e) {
  std::int64_t t = 0;
  for (std::size_t i = b; i < e && i < items.size(); ++i) t += estimate_node_tokens(items[i]);
  return t;
}

/// The covered ids for evicting items [region_start, cut): the old summary's coverage extended
/// by every node on the chain up to items[cut-1] (events included, so the segment is contiguous).
/// nullopt when the chain holds a view node (an imported summary sitting on the spine).
std::optional<std::vector<std::string>> covered_ids(Store& store, const Plan& p, std::size_t cut, std::string& why) {
  std::vector<std::string> out = p.old_covers;
  if (cut <= p.region_start) return out;
  std::string stop_after;  // walk back until this id (exclusive) ...
  std::string stop_at;     // ... or including this one
  if (p.old_summary) stop_after = p.old_covers.empty() ? std::string() : p.old_covers.back();
  else stop_at = p.items[p.region_start].id;
  // A stored fold of another strategy (an lcm summary, a snapcompact archive) at the start is not
  // on the chain: the segment starts at the first node it covers, and the walk passes its rows.
  std::int64_t bound = p.r.spine_length + 2;
  for (const auto& f : p.r.folds) {
    bound += f.count;
    if (!p.old_summary && f.id == stop_at) stop_at = f.first;
  }
  std::vector<std::string> rev;
  std::optional<std::string> cur = p.items[cut - 1].id;
  // A region summary (compact --from/--to) at the end stands for its rows: the walk starts at its
  // last covered node.
  for (const auto& f : p.r.folds)
    if (parse_label(f.kind) == StrategyLabel::region && f.id == *cur) cur = f.last;
  for (std::int64_t steps = 0; cur; ++steps) {
    if (steps > bound) {
      why = "the chain behind the cut is longer than the rendered spine";
      return std::nullopt;
    }
    if (!stop_after.empty() && *cur == stop_after) break;
    auto n = store.node(*cur, false);
    if (!n) {
      why = fmt::format("node '{}' on the chain is missing", *cur);
      return std::nullopt;
    }
    if (n->is_view()) {
      why = fmt::format("view node '{}' sits on the chain inside the segment to cover", n->id);
      return std::nullopt;
    }
    rev.push_back(n->id);
    if (!stop_at.empty() && *cur == stop_at) break;
    cur = n->predecessor;
    if (!cur && !stop_after.empty()) {
      why = "the chain does not reach the previous summary's coverage";
      return std::nullopt;
    }
  }
  out.insert(out.end(), rev.rbegin(), rev.rend());
  return out;
}

namespace {

/// The sizes one tree is built with.
struct TreeSizes {
  std::int64_t window = 0;      // the summarizer window chunks are sized against
  std::int64_t chunk = 0;       // half of it: one request's input
  std::int64_t budget = 0;      // chunk less the prompt: transcript (or merged summaries) per call
  std::int64_t first = 0;       // the first leaf's budget, next to the previous summary
  std::int64_t max_piece = 0;   // the largest answer accepted (oversized_answer): 2 x max_output
  int fanin = 2;                // the fewest summaries one merge takes when each is max_piece
  int cap = 0;
};

TreeSizes tree_sizes(const Summarizer& summarizer, const RollingOptions& opts, std::int64_t max_output,
                     const std::string& old) {
  TreeSizes z;
  z.window = opts.summarizer_window > 0 ? opts.summarizer_window : summarizer.window_tokens();
  z.chunk = z.window / 2;
  const std::int64_t overhead = estimate_text_tokens(embedded_prompt(kDefaultPromptVersion)) +
                                estimate_text_tokens(opts.instructions) + 64;
  z.budget = z.chunk - overhead;
  z.first = z.budget - estimate_text_tokens(old);
  z.max_piece = 2 * max_output;
  z.fanin = static_cast<int>(std::max<std::int64_t>(2, z.budget / (z.max_piece + 1)));
  z.cap = summarizer_call_cap(opts, summarizer, kRemoteCallCap);
  return z;
}

/// Merge calls a tree over n summaries needs at most, when every merge takes at least `fanin`.
std::int64_t merges_upper(std::int64_t n, int fanin) {
  std::int64_t m = 0;
  while (n > 1) {
    n = (n + fanin - 1) / fanin;
    m += n;
  }
  return m;
}

/// The most leaves whose merges still fit `cap` calls with them.
std::int64_t leaves_within(int cap, int fanin) {
  if (cap == std::numeric_limits<int>::max()) return std::numeric_limits<std::int64_t>::max();
  std::int64_t j = 1;
  while (j + 1 + merges_upper(j + 1, fanin) <= cap) ++j;
  return j;
}

/// The largest answer oversized_answer accepts for an input of `in` tokens: the plan's bound.
std::int64_t largest_answer(std::int64_t in, std::int64_t max_output) {
  return std::min(2 * max_output, static_cast<std::int64_t>(kMaxCallRatio * static_cast<double>(in)));
}

/// One summary of the tree and the prefix of evicted units it stands for.
struct Piece {
  std::string text;
  std::int64_t tokens = 0;
  std::size_t units_end = 0;
};

/// The end of the group of pieces from i that one merge takes: as many as fit `budget` (each
/// counted with one token of separator), at least two.
std::size_t group_end(const std::vector<Piece>& pieces, std::size_t i, std::int64_t budget) {
  std::size_t j = i;
  std::int64_t used = 0;
  while (j < pieces.size() && (j < i + 2 || used + pieces[j].tokens + 1 <= budget)) used += pieces[j++].tokens + 1;
  return j;
}

/// One call: the cleaned answer, or the failure.
std::optional<Error> call_once(Summarizer& summarizer, const SummaryRequest& req, std::int64_t max_output, Chunked& c,
                               std::string& text) {
  ++c.calls;
  c.input_tokens += req.input_tokens;
  SummaryResult out;
  try {
    out = summarizer.summarize(req);
  } catch (const Error& e) {
    return e;
  }
  text = out.text;
  if (auto bad = clean_summary_text(text)) return bad;
  if (auto bad = oversized_answer(estimate_text_tokens(text), req.input_tokens, max_output)) return bad;
  if (!out.usage.empty()) c.usage.push_back(out.usage);
  return std::nullopt;
}

/// The leaves: each chunk of units summarized on its own, the first with the previous summary.
std::vector<Piece> summarize_leaves(const Plan& p, Summarizer& summarizer, const RollingOptions& opts,
                                    std::int64_t max_output, const TreeSizes& z, const std::string& old, Chunked& c,
                                    Sha256& digest) {
  std::vector<Piece> pieces;
  const std::int64_t limit = leaves_within(z.cap, z.fanin);
  std::size_t next = 0;
  bool first = true;
  while (next < p.cut_unit || first) {
    if (static_cast<std::int64_t>(pieces.size()) >= limit || c.calls >= z.cap) {
      c.capped = true;
      break;
    }
    std::size_t end = next;
    std::string transcript = chunk_transcript(p, summarizer, next, first ? z.first : z.budget, end);
    const std::string carried = first ? old : std::string();
    first = false;
    if (transcript.empty() && carried.empty()) {
      next = end;  // nothing readable in these units (hidden reasoning only): covered, nothing to say
      if (!pieces.empty()) pieces.back().units_end = next;
      continue;
    }
    SummaryRequest req = chunk_request(carried, transcript, opts, max_output, digest);
    std::string text;
    if (auto bad = call_once(summarizer, req, max_output, c, text)) {
      c.failure = *bad;
      break;
    }
    const std::int64_t tokens = estimate_text_tokens(text);
    pieces.push_back(Piece{std::move(text), tokens, end});
    next = end;
  }
  c.leaves = static_cast<int>(pieces.size());
  return pieces;
}

/// One level of merges; a failure or the cap keeps the rest of the level unmerged.
std::vector<Piece> merge_level(std::vector<Piece>& pieces, Summarizer& summarizer, const RollingOptions& opts,
                               std::int64_t max_output, const TreeSizes& z, Chunked& c, Sha256& digest) {
  std::vector<Piece> up;
  bool stopped = false;  // a failure or the cap: the rest of the level stays as it is
  for (std::size_t i = 0; i < pieces.size();) {
    const std::size_t j = group_end(pieces, i, z.budget);
    if (j - i == 1 || stopped) {
      for (; i < j; ++i) up.push_back(std::move(pieces[i]));
      continue;
    }
    if (c.calls >= z.cap) {
      c.capped = stopped = true;
      continue;
    }
    std::string merged;
    for (std::size_t k = i; k < j; ++k) merged += (merged.empty() ? "" : "\n\n") + pieces[k].text;
    if (estimate_text_tokens(merged) > z.budget) merged = shorten_middle(merged, static_cast<std::size_t>(z.budget) * 4);
    SummaryRequest req = chunk_request(merged, std::string(), opts, max_output, digest);
    std::string text;
    if (auto bad = call_once(summarizer, req, max_output, c, text)) {
      c.failure = *bad;
      stopped = true;
      continue;
    }
    const std::int64_t tokens = estimate_text_tokens(text);
    up.push_back(Piece{std::move(text), tokens, pieces[j - 1].units_end});
    i = j;
  }
  return up;
}

}  // namespace

Chunked summarize_chunks(const Plan& p, Summarizer& summarizer, const RollingOptions& opts, std::int64_t max_output) {
  Chunked c;
  const std::string old = p.old_summary ? unframe_summary(node_text(*p.old_summary)) : std::string();
  const TreeSizes z = tree_sizes(summarizer, opts, max_output, old);
  c.chunk_tokens = z.chunk;
  Sha256 digest;
  if (z.first < kMinChunkTokens) {
    c.failure = Error(Exit::environment, "summarizer.window",
                      fmt::format("the summarizer window of {} tokens leaves no room for a chunk next to the carried "
                                  "summary of {} tokens",
                                  z.window, estimate_text_tokens(old)),
                      "use a summarizer with a larger window or --summarizer-window");
    c.summary = old;
    c.input_digest = digest.hex();
    return c;
  }
  std::vector<Piece> pieces = summarize_leaves(p, summarizer, opts, max_output, z, old, c, digest);
  c.depth = pieces.empty() ? 0 : 1;
  while (pieces.size() > 1 && !c.failure) {
    const std::size_t before = pieces.size();
    pieces = merge_level(pieces, summarizer, opts, max_output, z, c, digest);
    ++c.depth;
    if (pieces.size() == before) break;  // the cap stopped every merge of the level
  }
  if (!pieces.empty()) {
    c.summary = std::move(pieces.front().text);
    c.units_done = pieces.front().units_end;
    // More than one piece left: a failure or the cap stopped the merges; the first covers a prefix.
  } else {
    c.summary = c.failure ? old : std::string();
  }
  if (!c.failure && !c.capped && c.summary.empty())
    c.failure = Error(Exit::environment, "summarizer.empty", "nothing readable to summarize in the evicted history");
  c.input_digest = digest.hex();
  return c;
}

Json ChunkPlan::to_json() const {
  return Json{{"calls", leaves + merges},
              {"leaf_calls", leaves},
              {"merge_calls", merges},
              {"depth", depth},
              {"input_tokens", input_tokens},
              {"chunk_tokens", chunk_tokens},
              {"call_cap", cap == std::numeric_limits<int>::max() ? Json(nullptr) : Json(cap)},
              {"within_cap", within_cap},
              {"estimated", "leaves exact; merge levels assume every answer is as large as accepted (2 x the output limit)"}};
}

ChunkPlan plan_chunks(const Plan& p, const Summarizer& summarizer, const RollingOptions& opts, std::int64_t max_output) {
  ChunkPlan cp;
  const std::string old = p.old_summary ? unframe_summary(node_text(*p.old_summary)) : std::string();
  const TreeSizes z = tree_sizes(summarizer, opts, max_output, old);
  cp.chunk_tokens = z.chunk;
  cp.cap = z.cap;
  if (z.first < kMinChunkTokens) return cp;
  const std::int64_t limit = leaves_within(z.cap, z.fanin);
  std::vector<Piece> pieces;
  std::size_t next = 0;
  bool first = true;
  while (next < p.cut_unit || first) {
    if (static_cast<std::int64_t>(pieces.size()) >= limit) {
      cp.within_cap = false;
      break;
    }
    std::size_t end = next;
    std::string transcript = chunk_transcript(p, summarizer, next, first ? z.first : z.budget, end);
    const std::string carried = first ? old : std::string();
    first = false;
    next = end;
    if (transcript.empty() && carried.empty()) {
      if (!pieces.empty()) pieces.back().units_end = next;
      continue;
    }
    const std::int64_t in = estimate_text_tokens(carried) + estimate_text_tokens(transcript);
    cp.input_tokens += in;
    pieces.push_back(Piece{std::string(), largest_answer(in, max_output), end});
  }
  cp.leaves = static_cast<int>(pieces.size());
  cp.depth = pieces.empty() ? 0 : 1;
  while (pieces.size() > 1) {
    std::vector<Piece> up;
    for (std::size_t i = 0; i < pieces.size();) {
      const std::size_t j = group_end(pieces, i, z.budget);
      if (j - i == 1) {
        up.push_back(pieces[i++]);
        continue;
      }
      std::int64_t in = 0;
      for (std::size_t k = i; k < j; ++k) in += pieces[k].tokens;
      in = std::min(in, z.budget);
      ++cp.merges;
      cp.input_tokens += in;
      up.push_back(Piece{std::string(), largest_answer(in, max_output), pieces[j - 1].units_end});
      i = j;
    }
    pieces = std::move(up);
    ++cp.depth;
  }
  cp.units_covered = cp.within_cap || pieces.empty() ? p.cut_unit : pieces.front().units_end;
  return cp;
}

}  // namespace rolling_parts
}  // namespace ctxfold
