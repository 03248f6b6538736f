#include "strategies/rolling_parts.hpp"

#include <fmt/format.h>

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
std::string chunk_transcript(const Plan& p, Summarizer& summarizer, std::size_t next, std::int64_t budget,
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

/// Summarizes the previous summary plus the evicted units in chunks of at most half the
/// summarizer window, the summary carried from chunk to chunk.
Chunked summarize_chunks(const Plan& p, Summarizer& summarizer, const RollingOptions& opts, std::int64_t max_output) {
  Chunked c;
  c.summary = p.old_summary ? unframe_summary(node_text(*p.old_summary)) : std::string();
  const std::int64_t window = opts.summarizer_window > 0 ? opts.summarizer_window : summarizer.window_tokens();
  c.chunk_tokens = window / 2;
  const std::int64_t overhead = estimate_text_tokens(embedded_prompt(kDefaultPromptVersion)) +
                                estimate_text_tokens(opts.instructions) + 64;
  Sha256 digest;
  std::size_t next = 0;
  const std::size_t evicted = p.cut_unit;
  bool first = true;
  while (next < evicted || first) {
    if (c.calls >= opts.max_calls) {
      c.capped = true;
      break;
    }
    std::int64_t budget = c.chunk_tokens - overhead - estimate_text_tokens(c.summary);
    if (budget < kMinChunkTokens) {
      c.failure = Error(Exit::environment, "summarizer.window",
                        fmt::format("the summarizer window of {} tokens leaves no room for a chunk next to the carried "
                                    "summary of {} tokens",
                                    window, estimate_text_tokens(c.summary)),
                        "use a summarizer with a larger window or --summarizer-window");
      break;
    }
    std::size_t end = next;
    std::string transcript = chunk_transcript(p, summarizer, next, budget, end);
    first = false;
    if (transcript.empty() && c.summary.empty()) {
      next = end;  // nothing readable in these units (hidden reasoning only): covered, nothing to say
      c.units_done = next;
      continue;
    }
    SummaryRequest req = chunk_request(c.summary, transcript, opts, max_output, digest);
    ++c.calls;
    SummaryResult out;
    try {
      out = summarizer.summarize(req);
    } catch (const Error& e) {
      c.failure = e;
      break;
    }
    std::string text = out.text;
    if (auto bad = clean_summary_text(text)) {
      c.failure = *bad;
      break;
    }
    if (auto bad = oversized_answer(estimate_text_tokens(text), req.input_tokens, max_output)) {
      c.failure = *bad;
      break;
    }
    c.summary = std::move(text);
    if (!out.usage.empty()) c.usage.push_back(out.usage);
    next = end;
    c.units_done = next;
  }
  if (!c.failure && !c.capped && c.summary.empty())
    c.failure = Error(Exit::environment, "summarizer.empty", "nothing readable to summarize in the evicted history");
  c.input_digest = digest.hex();
  return c;
}

}  // namespace rolling_parts
}  // namespace ctxfold
