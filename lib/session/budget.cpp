#include "session/budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "catalog/models.hpp"
#include "model/quoted_id.hpp"
#include "summarize/prompt.hpp"
#include "summarize/transcript.hpp"
#include "tokens/calibrate.hpp"
#include "tokens/estimate.hpp"
#include "util/digest.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {

OutputCap resolve_output_cap(std::int64_t window, std::optional<std::int64_t> explicit_cap, const std::string& model) {
  if (window < 1) throw Error(Exit::usage, "budget.invalid", fmt::format("--budget must be at least 1 token, not {}", window));
  if (explicit_cap) {
    if (*explicit_cap < 1)
      throw Error(Exit::usage, "budget.invalid", fmt::format("--max-output must be at least 1 token, not {}", *explicit_cap));
    return OutputCap{*explicit_cap, "flag"};
  }
  OutputCap c{kStandardOutputReserve, "reserve"};
  if (!model.empty()) {
    ModelInfo m = lookup_model(model);
    if (m.max_output_tokens && *m.max_output_tokens < c.tokens) c = OutputCap{*m.max_output_tokens, "model"};
  }
  if (window / 4 < c.tokens) c = OutputCap{window / 4, "quarter"};
  return c;
}

std::int64_t budget_margin(std::int64_t budget) { return std::max<std::int64_t>(256, budget / 100); }

Json BudgetReport::to_json() const {
  return Json{{"budget", budget},
              {"output_cap", output_cap.tokens},
              {"output_cap_source", output_cap.source},
              {"margin", margin},
              {"input_budget", input_budget},
              {"tokens_before", tokens_before},
              {"tokens_after", tokens_after},
              {"calls", calls},
              {"max_calls", max_calls},
              {"cache_hits", cache_hits},
              {"elapsed_ms", elapsed_ms},
              {"results_summarized", results_summarized},
              {"checkpoints", checkpoints},
              {"stopped", stopped ? Json(*stopped) : Json(nullptr)},
              {"failure", failure ? Json(*failure) : Json(nullptr)}};
}

std::string budget_summary_line(const BudgetReport& b) {
  return fmt::format(
      "ctxfold: budget: {} tokens (output cap {} from {}, margin {}, input budget {}): {} -> {} tokens, {} summary "
      "call{} of at most {}, {} cached, {} result{} summarized, {} checkpoint{}, {} ms",
      b.budget, b.output_cap.tokens, b.output_cap.source, b.margin, b.input_budget, b.tokens_before, b.tokens_after,
      b.calls, b.calls == 1 ? "" : "s", b.max_calls, b.cache_hits, b.results_summarized.size(),
      b.results_summarized.size() == 1 ? "" : "s", b.checkpoints.size(), b.checkpoints.size() == 1 ? "" : "s",
      b.elapsed_ms);
}

namespace {

bool is_type(const Json& b, const char* t) { return b.is_object() && json_str(b, "type") == t; }

/// Local estimate of one rendered message: its blocks plus the message framing (generic provider).
std::int64_t message_tokens(const RenderedMessage& m) {
  std::int64_t t = kAnthropicFraming.message;
  if (m.content.is_array())
    for (const auto& b : m.content) {
      // Unsigned thinking is never sent (the anthropic renderer drops it, openai drops all
      // thinking) and the render's estimate does not count it for those sources.
      if (is_type(b, "thinking") && json_str(b, "signature").empty()) continue;
      t += estimate_block_tokens(b);
    }
  return t;
}

/// Text of a tool_result's content when it is text only (a string or text blocks); nullopt when
/// it carries anything else (an image: multimodal content is never summarized).
std::optional<std::string> text_only_result(const Json& block) {
  if (!block.contains("content")) return std::string();
  const Json& c = block["content"];
  if (c.is_string()) return c.get<std::string>();
  if (c.is_null()) return std::string();
  if (!c.is_array()) return std::nullopt;
  std::string out;
  for (const auto& b : c) {
    if (!is_type(b, "text")) return std::nullopt;
    if (!out.empty()) out += "\n";
    out += json_str(b, "text");
  }
  return out;
}

/// Why a message may not enter a checkpoint (empty: it may). Signed reasoning, opaque blocks and
/// images are protected; an assistant message may hold text, unsigned thinking and tool calls.
std::string ineligible_block(const RenderedMessage& m) {
  if (!m.content.is_array()) return {};
  for (const auto& b : m.content) {
    const std::string t = json_str(b, "type");
    if (t == "image") return "multimodal content";
    if (t == "opaque") return "opaque reasoning";
    if (t == "thinking" && !json_str(b, "signature").empty()) return "signed reasoning";
    if (t == "tool_result" && !text_only_result(b)) return "multimodal content";
  }
  return {};
}

/// One assistant message and its tool-results message (if any), as the unit steps 2 and 3 work on.
struct Group {
  std::size_t begin = 0, end = 0;  ///< message indexes [begin, end)
  bool complete = true;            ///< every call has a recorded result
  bool results_ok = false;         ///< step 2 may summarize its text-only results (complete, not latest)
  std::string protect;             ///< why it may not enter a checkpoint (empty: it may)
};

class Budgeter {
 public:
  Budgeter(Rendered& r, Summarizer& s, const BudgetOptions& o, BudgetCache& cache, BudgetReport& rep)
      : r_(r), s_(s), o_(o), cache_(cache), rep_(rep), start_(std::chrono::steady_clock::now()) {
    chunk_tokens_ = o.chunk_tokens > 0 ? o.chunk_tokens : std::max<std::int64_t>(1024, s.window_tokens() / 2);
  }

  std::int64_t figure() const {
    return calibrated_figure(r_.estimated_tokens, r_.tokens.calibration).value + o_.extra_tokens;
  }
  std::int64_t over() const { return figure() - rep_.input_budget; }

  /// Replaces message i's content, keeping r.estimated_tokens in step.
  void set_content(std::size_t i, Json content) {
    std::int64_t before = message_tokens(r_.messages[i]);
    r_.messages[i].content = std::move(content);
    r_.estimated_tokens += message_tokens(r_.messages[i]) - before;
  }

  bool out_of_calls() {
    if (rep_.calls >= (cap_override_ > 0 ? cap_override_ : o_.max_calls)) {
      rep_.stopped = "calls";
      return true;
    }
    if (elapsed_ms() >= o_.deadline_ms) {
      rep_.stopped = "deadline";
      return true;
    }
    return false;
  }
  std::int64_t elapsed_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
  }

  /// One summary call through the cache. nullopt: stopped (cap, deadline) or failed (recorded);
  /// a context-length failure is thrown back as Error for the caller to retry smaller.
  std::optional<std::string> call(const std::string& previous, const std::string& transcript, std::int64_t max_out) {
    SummaryRequest req;
    req.previous_summary = previous;
    req.transcript = transcript;
    req.instructions = o_.instructions;
    req.max_output_tokens = max_out;
    req.input_tokens = estimate_text_tokens(previous) + estimate_text_tokens(transcript);
    req.prompt_version = std::string(kDefaultPromptVersion);
    Sha256 h;
    for (const std::string& part : {s_.kind(), s_.model(), std::to_string(max_out), req.instructions, req.prompt_version,
                                    previous, transcript}) {
      h.update(part);
      h.update(std::string_view("\0", 1));
    }
    const std::string key = h.hex();
    if (auto it = cache_.answers.find(key); it != cache_.answers.end()) {
      ++cache_.hits;
      ++rep_.cache_hits;
      return it->second;
    }
    if (rep_.stopped || out_of_calls()) return std::nullopt;  // a failure stops every later call
    ++rep_.calls;
    try {
      SummaryResult out = s_.summarize(req);
      if (out.text.empty()) {
        rep_.stopped = "summarizer.empty";
        rep_.failure = "the summarizer returned an empty answer";
        return std::nullopt;
      }
      cache_.answers.emplace(key, out.text);
      return out.text;
    } catch (const Error& e) {
      if (e.code() == "summarizer.context_length") throw;
      rep_.stopped = e.code();
      rep_.failure = e.what();
      return std::nullopt;
    }
  }

  /// Summarizes `text` in chunks of at most chunk_tokens, the summary carried from chunk to
  /// chunk; a context-length failure halves the chunk and redoes the current one (at most down to
  /// 256 tokens). nullopt when stopped before the end.
  std::optional<std::string> summarize_text(const std::string& text, std::int64_t max_out) {
    std::int64_t chunk = chunk_tokens_;
    std::string summary;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::int64_t room = std::max<std::int64_t>(256, chunk - estimate_text_tokens(summary));
      // Bytes of the next piece: the room at ~4 bytes a token, shrunk until its estimate fits.
      std::size_t len = std::min(text.size() - pos, static_cast<std::size_t>(room) * 4);
      len = utf8_safe_prefix(std::string_view(text).substr(pos), len);
      while (len > 64 && estimate_text_tokens(std::string_view(text).substr(pos, len)) > room)
        len = utf8_safe_prefix(std::string_view(text).substr(pos), len * 3 / 4);
      if (len == 0) len = std::min<std::size_t>(text.size() - pos, 4);
      std::optional<std::string> out;
      try {
        out = call(summary, text.substr(pos, len), max_out);
      } catch (const Error& e) {
        if (chunk / 2 < 256) {
          rep_.stopped = e.code();
          rep_.failure = e.what();
          return std::nullopt;
        }
        chunk /= 2;  // a context-length failure retries with a smaller chunk
        continue;
      }
      if (!out) return std::nullopt;
      summary = std::move(*out);
      pos += len;
    }
    return summary;
  }

  std::vector<Group> groups() const {
    std::vector<Group> gs;
    std::set<std::string> synthetic;
    for (const auto& rp : r_.repairs)
      if (rp.kind == "synthetic_result") synthetic.insert(rp.tool_use_id);
    const auto& ms = r_.messages;
    for (std::size_t i = 0; i < ms.size(); ++i) {
      if (ms[i].role != role::kAssistant) continue;
      Group g;
      g.begin = i;
      g.end = i + 1;
      if (i + 1 < ms.size() && ms[i + 1].role == role::kTool && ms[i + 1].kind == "tool_results") g.end = i + 2;
      for (std::size_t k = g.begin; k < g.end; ++k) {
        if (g.protect.empty()) g.protect = ineligible_block(ms[k]);
        if (ms[k].role == role::kTool)
          for (const auto& b : ms[k].content)
            if (synthetic.count(json_str(b, "tool_use_id"))) g.complete = false;
      }
      if (!g.complete) g.protect = "incomplete tool group";
      g.results_ok = g.complete;
      gs.push_back(g);
    }
    if (!gs.empty()) {
      gs.back().protect = "latest assistant segment";
      gs.back().results_ok = false;
    }
    // Anything after the latest assistant message (a trailing user message) is protected by role.
    return gs;
  }

  /// Step 1's protected-content check: every part no step may shrink, named with its tokens.
  void check_protected(const std::vector<Group>& gs) {
    std::vector<bool> in_group(r_.messages.size(), false);
    std::int64_t eligible = 0;  // what steps 2 and 3 could remove at best
    std::map<std::string, std::int64_t> by_reason;
    for (const auto& g : gs) {
      std::int64_t t = 0, removable = 0;
      for (std::size_t k = g.begin; k < g.end; ++k) {
        in_group[k] = true;
        t += message_tokens(r_.messages[k]);
      }
      if (g.protect.empty()) {
        removable = t;
      } else if (g.results_ok && g.end - g.begin == 2) {
        for (const auto& b : r_.messages[g.begin + 1].content)
          if (is_type(b, "tool_result") && text_only_result(b)) {
            const std::int64_t bt = estimate_block_tokens(b);
            if (bt >= o_.min_result_tokens) removable += bt;
          }
      }
      eligible += removable;
      if (t > removable) by_reason[g.protect] += t - removable;
    }
    std::int64_t system = 0, users = 0, latest_user = 0, summaries = 0, other = 0;
    for (std::size_t i = 0; i < r_.messages.size(); ++i) {
      if (in_group[i]) continue;
      const auto& m = r_.messages[i];
      const std::int64_t t = message_tokens(m);
      if (m.role == role::kSystem) {
        system += t;
      } else if (m.kind == kind::kSummary) {
        summaries += t;
      } else if (m.role == role::kUser) {
        users += t;
        latest_user = t;
      } else {
        other += t;
      }
    }
    // The figure of protected content: the request figure less what steps 2 and 3 could remove
    // at best (every eligible message), so calibration remainder and extra tokens stay counted.
    const std::int64_t floor = figure() - eligible;
    if (floor + rep_.output_cap.tokens + rep_.margin <= o_.budget) return;
    std::string parts = fmt::format("system prompt {} tokens, user messages {} (the latest {})", system, users, latest_user);
    if (summaries) parts += fmt::format(", stored summaries {}", summaries);
    for (const auto& [why, t] : by_reason) parts += fmt::format(", {} {}", why, t);
    if (other) parts += fmt::format(", other messages {}", other);
    if (o_.tools_tokens) parts += fmt::format(", tool definitions {}", o_.tools_tokens);
    const std::int64_t rest = floor - system - users - summaries - other - o_.tools_tokens;
    std::int64_t named = 0;
    for (const auto& [why, t] : by_reason) named += t;
    if (rest - named > 0) parts += fmt::format(", unseen request content and framing {}", rest - named);
    throw Error(Exit::environment, "budget.protected",
                fmt::format("the budget of {} tokens cannot hold the protected content of this request: {} tokens ({}) "
                            "plus the output cap of {} ({}) and the safety margin of {}",
                            o_.budget, floor, parts, rep_.output_cap.tokens, rep_.output_cap.source, rep_.margin),
                "raise --budget, lower --max-output, or compact the session first (ctxfold compact)");
  }

  struct Cand {
    std::size_t msg, block;
    std::int64_t tokens;
  };
  /// Step 2's candidates, largest first: text-only results of completed groups outside the
  /// latest segment, at least min_result_tokens.
  std::vector<Cand> result_candidates(const std::vector<Group>& gs) const {
    std::vector<Cand> cands;
    for (const auto& g : gs) {
      if (!g.results_ok || g.end - g.begin < 2) continue;
      const auto& tm = r_.messages[g.begin + 1];
      for (std::size_t b = 0; b < tm.content.size(); ++b) {
        const Json& blk = tm.content[b];
        if (!is_type(blk, "tool_result") || !text_only_result(blk)) continue;
        std::int64_t t = estimate_block_tokens(blk);
        if (t >= o_.min_result_tokens) cands.push_back({g.begin + 1, b, t});
      }
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.tokens > b.tokens; });
    return cands;
  }

  /// Whether step 2 can close the gap at best: the largest results its half of the calls can
  /// reach, each shrunk to a result summary (result_summary_tokens plus its header).
  bool results_can_close_gap(const std::vector<Group>& gs) const {
    std::int64_t saved = 0;
    int n = 0;
    for (const auto& c : result_candidates(gs)) {
      if (n++ >= std::max(1, o_.max_calls / 2)) break;
      saved += std::max<std::int64_t>(0, c.tokens - o_.result_summary_tokens - 64);
    }
    return saved >= over();
  }

  /// Step 2: tool-result summaries, largest first, at most half the calls.
  void summarize_results(const std::vector<Group>& gs) {
    std::vector<Cand> cands = result_candidates(gs);
    const int cap = std::min(o_.max_calls, rep_.calls + std::max(1, o_.max_calls / 2));
    for (const auto& c : cands) {
      if (over() <= 0) break;
      if (rep_.calls >= cap) break;
      const Json& blk = r_.messages[c.msg].content[c.block];
      const std::string text = *text_only_result(blk);
      const std::string id = json_str(blk, "tool_use_id");
      // The call it answers, for context (name and id only; the arguments stay in the request).
      std::string head = fmt::format("[tool result id={}{}]\n", id, blk.value("is_error", false) ? ", error" : "");
      std::optional<std::string> sum;
      {
        CapGuard g(*this, cap);
        sum = summarize_text(head + text, o_.result_summary_tokens);
      }
      if (!sum) {
        if (rep_.stopped == "calls") rep_.stopped.reset();  // step 2's half is used up; step 3 goes on
        break;
      }
      std::string note = fmt::format(
          "[ctxfold: tool result summarized for this request only; the original ({} tokens) is in node {}: `ctxfold show "
          "{}` reads it whole]\n{}",
          c.tokens, quoted(source_of(c.msg, id)), quoted(source_of(c.msg, id)), *sum);
      Json nb = blk;
      nb["content"] = note;
      if (estimate_block_tokens(nb) >= c.tokens) continue;  // not smaller: keep the original
      Json content = r_.messages[c.msg].content;
      content[c.block] = std::move(nb);
      set_content(c.msg, std::move(content));
      rep_.results_summarized.push_back(id);
    }
  }

  /// The node a tool result came from (the rendered item holding it); a tool-results message may
  /// gather results of several nodes (parallel calls recorded one result per node).
  std::string source_of(std::size_t msg, const std::string& tool_use_id) const {
    for (const auto& id : r_.messages[msg].ids)
      for (const auto& n : r_.items)
        if (n.id == id && n.content.is_array())
          for (const auto& b : n.content)
            if (is_type(b, "tool_result") && json_str(b, "tool_use_id") == tool_use_id) return id;
    return r_.messages[msg].ids.empty() ? tool_use_id : r_.messages[msg].ids.front();
  }

  /// The id model-visible text names a rendered node by (model/quoted_id.hpp): the same in a fork
  /// as in its source, so a budgeted request of a fork equals its source's.
  std::string quoted(const std::string& id) const {
    for (const auto& n : r_.items)
      if (n.id == id) return quoted_id(n);
    return id;
  }

  /// Step 3: checkpoints over runs of eligible groups, oldest first.
  void checkpoint(const std::vector<Group>& gs) {
    // Runs of consecutive eligible groups (no message between them).
    std::vector<std::vector<Group>> runs;
    for (const auto& g : gs) {
      if (!g.protect.empty()) continue;
      if (!runs.empty() && runs.back().back().end == g.begin)
        runs.back().push_back(g);
      else
        runs.push_back({g});
    }
    // Applied newest run last so earlier indexes stay valid: plan all first, then splice from
    // the back. Each run covers only as many groups as the remaining excess needs.
    struct Done {
      std::size_t begin, end;
      RenderedMessage msg;
      std::int64_t before;
    };
    std::vector<Done> done;
    std::int64_t need = over();
    for (const auto& run : runs) {
      if (need <= 0) break;
      std::string summary;
      std::size_t covered = 0;  // groups of the run summarized
      std::int64_t removed = 0;
      std::int64_t chunk_budget = chunk_tokens_;
      // Groups packed into chunks of chunk_tokens transcript tokens.
      while (covered < run.size() && need + estimate_text_tokens(summary) + 64 - removed > 0) {
        std::string transcript;
        std::size_t end = covered;
        std::int64_t chunk_removed = 0, used = 0;  // used: the transcript's estimate, summed per group
        const std::int64_t room = std::max<std::int64_t>(256, chunk_budget - estimate_text_tokens(summary));
        while (end < run.size()) {
          std::string t = group_text(run[end]);
          std::int64_t tt = estimate_text_tokens(t) + 1;
          if (!transcript.empty() && used + tt > room) break;
          if (tt > room) t = shorten_middle(t, static_cast<std::size_t>(room) * 4);
          used += tt;
          transcript += (transcript.empty() ? "" : "\n\n") + t;
          for (std::size_t k = run[end].begin; k < run[end].end; ++k) chunk_removed += message_tokens(r_.messages[k]);
          ++end;
          // Stop packing once this chunk removes enough (a smaller checkpoint keeps more verbatim).
          if (need + estimate_text_tokens(summary) + o_.checkpoint_summary_tokens - removed - chunk_removed <= 0) break;
        }
        std::optional<std::string> out;
        try {
          out = call(summary, transcript, o_.checkpoint_summary_tokens);
        } catch (const Error& e) {
          if (chunk_budget / 2 < 256) {
            rep_.stopped = e.code();
            rep_.failure = e.what();
            break;
          }
          chunk_budget /= 2;
          continue;
        }
        if (!out) break;
        summary = std::move(*out);
        removed += chunk_removed;
        covered = end;
      }
      if (covered == 0) break;
      RenderedMessage cp{role::kUser, "checkpoint", {}, Json::array()};
      std::size_t messages = 0;
      for (std::size_t k = run.front().begin; k < run[covered - 1].end; ++k) {
        ++messages;
        for (const auto& id : r_.messages[k].ids)
          if (std::find(cp.ids.begin(), cp.ids.end(), id) == cp.ids.end()) cp.ids.push_back(id);
      }
      const std::string first = cp.ids.empty() ? "" : quoted(cp.ids.front());
      const std::string last = cp.ids.empty() ? "" : quoted(cp.ids.back());
      cp.content.push_back(Json{
          {"type", "text"},
          {"text", fmt::format("[ctxfold checkpoint: a task summary standing in, for this request only, for {} earlier "
                               "messages ({} tool steps) of this turn, nodes {} … {}; `ctxfold show ID` reads them]\n{}",
                               messages, covered, first, last, summary)}});
      std::int64_t cp_tokens = message_tokens(cp);
      if (cp_tokens >= removed) break;  // not smaller: keep the history
      need -= removed - cp_tokens;
      done.push_back(Done{run.front().begin, run[covered - 1].end, std::move(cp), removed});
      if (rep_.stopped) break;
    }
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      const std::int64_t after = message_tokens(it->msg);
      rep_.checkpoints.insert(rep_.checkpoints.begin(), Json{{"ids", it->msg.ids},
                                                              {"messages", it->end - it->begin},
                                                              {"tokens_before", it->before},
                                                              {"tokens_after", after}});
      r_.estimated_tokens += after - it->before;
      r_.messages.erase(r_.messages.begin() + static_cast<std::ptrdiff_t>(it->begin),
                        r_.messages.begin() + static_cast<std::ptrdiff_t>(it->end));
      r_.messages.insert(r_.messages.begin() + static_cast<std::ptrdiff_t>(it->begin), std::move(it->msg));
    }
  }

  std::string group_text(const Group& g) const {
    std::string out;
    for (std::size_t k = g.begin; k < g.end; ++k) {
      Node n;
      n.role = r_.messages[k].role;
      n.content = r_.messages[k].content;
      std::string t = node_transcript(n);
      if (t.empty()) continue;
      if (!out.empty()) out += "\n\n";
      out += t;
    }
    return out;
  }

  /// Limits calls to `cap` for step 2, restoring the real cap afterwards.
  struct CapGuard {
    Budgeter& b;
    int saved;
    CapGuard(Budgeter& bb, int cap) : b(bb), saved(bb.cap_override_) { b.cap_override_ = cap; }
    ~CapGuard() { b.cap_override_ = saved; }
  };

 private:
  Rendered& r_;
  Summarizer& s_;
  const BudgetOptions& o_;
  BudgetCache& cache_;
  BudgetReport& rep_;
  std::chrono::steady_clock::time_point start_;
  std::int64_t chunk_tokens_ = 0;

 public:
  int cap_override_ = 0;
};

}  // namespace

BudgetReport apply_budget(Rendered& r, Summarizer& summarizer, const BudgetOptions& o, BudgetCache& cache) {
  BudgetReport rep;
  rep.budget = o.budget;
  rep.max_calls = o.max_calls;
  rep.output_cap = resolve_output_cap(o.budget, o.max_output, o.model);
  rep.margin = budget_margin(o.budget);
  rep.input_budget = o.budget - rep.output_cap.tokens - rep.margin;
  Budgeter b(r, summarizer, o, cache, rep);
  rep.tokens_before = b.figure();
  if (b.over() > 0) {
    std::vector<Group> gs = b.groups();
    b.check_protected(gs);
    // The preferred order: result summaries first, a checkpoint when they are not enough. When even
    // their best case cannot close the gap the checkpoint runs first (the results it would absorb
    // are not summarized in vain) and result summaries then work on what it left.
    if (b.results_can_close_gap(gs)) {
      b.summarize_results(gs);
      if (b.over() > 0) b.checkpoint(gs);
    } else {
      b.checkpoint(gs);
      if (b.over() > 0 && !rep.stopped) b.summarize_results(b.groups());
    }
  }
  r.tokens = calibrated_figure(r.estimated_tokens, r.tokens.calibration);
  rep.tokens_after = b.figure();
  rep.elapsed_ms = b.elapsed_ms();
  if (rep.tokens_after > rep.input_budget) {
    std::string why = rep.stopped ? fmt::format("; summarizing stopped: {}{}", *rep.stopped,
                                                rep.failure ? " (" + *rep.failure + ")" : std::string())
                                  : std::string("; nothing more is eligible");
    throw Error(Exit::environment, "budget.over",
                fmt::format("the request is still estimated at {} tokens, over the input budget of {} (budget {} - "
                            "output cap {} - margin {}), after {} summary calls ({} results summarized, {} "
                            "checkpoints){}; nothing was printed",
                            rep.tokens_after, rep.input_budget, rep.budget, rep.output_cap.tokens, rep.margin, rep.calls,
                            rep.results_summarized.size(), rep.checkpoints.size(), why),
                "raise --budget, or compact the session (ctxfold compact) so fewer messages remain");
  }
  return rep;
}

}  // namespace ctxfold
