#include "strategies/notes.hpp"
#include "strategies/compaction.hpp"

#include <fmt/format.h>

#include "strategies/units.hpp"
#include "summarize/prompt.hpp"
#include "summarize/transcript.hpp"
#include "tokens/estimate.hpp"
#include "util/digest.hpp"

namespace ctxfold {

void apply_notes_config(const Json& config, NotesOptions& opts) {
  if (!config.is_object() || !config.contains("notes") || config["notes"].is_null()) return;
  const Json& sec = config["notes"];
  if (!sec.is_object()) throw Error(Exit::bad_input, "config.invalid", "config section \"notes\" must be an object");
  if (auto it = sec.find("enabled"); it != sec.end() && !it->is_null()) {
    if (!it->is_boolean()) throw Error(Exit::bad_input, "config.invalid", "notes.enabled must be true or false");
    opts.enabled = it->get<bool>();
  }
  if (auto b = config_int(sec, "notes", "budgetTokens", 64, 1000000)) opts.budget_tokens = *b;
}


std::optional<Node> session_notes(Store& store, const std::string& session, std::int64_t as_of) {
  return store.latest_of_kind(session, kind::kNotes, as_of);
}

namespace {

/// A rewrite of the notes: the rows it reads and what it carries from chunk to chunk.
struct Rewrite {
  std::vector<std::string> ids;  // the evicted rows, oldest first
  bool scratch = false;          // rewritten from all the fold covers, not from the previous notes
  std::string notes;
  Sha256 digest;
  int calls = 0;
  std::optional<Error> failure;
};

/// What was evicted since the notes last read: the chain back to their cursor; a cursor no longer
/// on the chain (a rewritten history) means the notes are rewritten from all the fold covers.
std::vector<std::string> evicted_since(Store& store, const CompactResult& res, const std::optional<std::string>& cursor,
                                       bool& scratch) {
  const std::int64_t bound = store.max_seq() + 1;
  std::vector<std::string> ids;
  scratch = !cursor;
  if (cursor) {
    try {
      ids = chain_segment(store, *res.covers_last, cursor, std::nullopt, bound);
    } catch (const Error&) {
      scratch = true;
    }
  }
  if (scratch) ids = chain_segment(store, *res.covers_last, std::nullopt, res.covers_first, bound);
  return ids;
}

/// The transcript of the message rows from ids[next] that fit `budget` tokens (a first row larger
/// than it is shortened); `next` moves past the rows read.
std::string chunk_transcript(Store& store, const std::vector<std::string>& ids, std::int64_t budget, std::size_t& next) {
  std::string transcript;
  std::int64_t used = 0;
  while (next < ids.size()) {
    auto n = store.node(ids[next], false);
    std::string t = n && n->kind == kind::kMessage ? node_transcript(*n) : std::string();
    const std::int64_t tt = estimate_text_tokens(t) + 1;
    if (used + tt > budget && !transcript.empty()) break;
    if (tt > budget) t = shorten_middle(t, static_cast<std::size_t>(budget) * 4);
    if (!t.empty()) transcript += (transcript.empty() ? "" : "\n\n") + t;
    used += tt;
    ++next;
  }
  return transcript;
}

/// Rewrites rw.notes over the evicted rows in chunks within half the summarizer window, the notes
/// carried along; the first failure stops it.
void rewrite_in_chunks(Store& store, Summarizer& summarizer, const NotesOptions& opts, Rewrite& rw) {
  const std::vector<std::string>& ids = rw.ids;
  std::string& notes = rw.notes;
  const std::int64_t window = opts.summarizer_window > 0 ? opts.summarizer_window : summarizer.window_tokens();
  const std::string instructions =
      fmt::format("Notes budget: {} tokens.{}{}", opts.budget_tokens, opts.instructions.empty() ? "" : " ", opts.instructions);
  const std::int64_t overhead = estimate_text_tokens(embedded_prompt(kNotesPrompt)) + estimate_text_tokens(instructions) + 64;
  std::size_t next = 0;
  while (next < ids.size() && !rw.failure) {
    const std::int64_t budget = window / 2 - overhead - estimate_text_tokens(notes);
    if (budget < 256) {
      rw.failure = Error(Exit::environment, "summarizer.window",
                         fmt::format("the summarizer window of {} tokens leaves no room next to the notes", window));
      break;
    }
    std::string transcript = chunk_transcript(store, ids, budget, next);
    if (transcript.empty()) continue;
    SummaryRequest req;
    req.previous_summary = notes;
    req.transcript = transcript;
    req.instructions = instructions;
    req.max_output_tokens = opts.budget_tokens * 5 / 4;
    req.input_tokens = estimate_text_tokens(notes) + estimate_text_tokens(transcript);
    req.prompt_version = kNotesPrompt;
    rw.digest.update(notes);
    rw.digest.update(std::string_view("\0", 1));
    rw.digest.update(transcript);
    ++rw.calls;
    try {
      SummaryResult r = summarizer.summarize(req);
      std::string text = r.text;
      if (auto bad = clean_summary_text(text)) rw.failure = *bad;
      else notes = std::move(text);
    } catch (const Error& e) {
      rw.failure = e;
    }
  }
}

/// A failed rewrite (an error, or no notes): out and the compact/notes event record the error.
void record_failure(Store& store, const std::string& session, const CompactResult& res, const Rewrite& rw, Json& out,
                    Json& event) {
  Error e = rw.failure ? *rw.failure : Error(Exit::environment, "summarizer.empty", "nothing readable to write notes from");
  out["status"] = "failed";
  out["error"] = Json{{"code", e.code()}, {"message", e.what()}};
  event["status"] = "failed";
  event["error"] = out["error"];
  Txn t(store.db());
  store.log_event(session, "compact/notes", *res.compaction, event);
  t.commit();
}

/// The notes node superseding `previous`: its cursor is the last row read.
Node notes_node(const std::string& session, const CompactResult& res, Rewrite& rw, const Json& previous,
                const Summarizer& summarizer, const NotesOptions& opts) {
  Node n;
  // From the summary the compaction wrote (itself derived from the state the compaction read), so
  // a compaction killed before its commit and retried names its notes as an uninterrupted run.
  n.id = "notes-" + sha256_hex(res.summary_id.value_or(*res.compaction)).substr(0, 16);
  n.session = session;
  n.kind = kind::kNotes;
  n.role = role::kUser;
  n.predecessor = rw.ids.back();
  n.content = Json::array({Json{{"type", "text"}, {"text", rw.notes}}});
  n.metadata =
      Json{{"strategy", "notes"},
           {"origin", "compact"},
           {"compaction", *res.compaction},
           {"supersedes", previous},
           {"notes", {{"cursor", rw.ids.back()}, {"budget_tokens", opts.budget_tokens}, {"from_scratch", rw.scratch}}},
           {"provenance",
            {{"summarizer", {{"kind", summarizer.kind()}, {"model", summarizer.model()}}},
             {"prompt_version", kNotesPrompt},
             {"input_digest", rw.digest.hex()},
             {"calls", rw.calls}}}};
  return n;
}

}  // namespace

Json rewrite_notes(Store& store, const std::string& session, const CompactResult& res, Summarizer& summarizer,
                   const NotesOptions& opts) {
  Json out{{"status", "skipped"}, {"id", nullptr}, {"previous", nullptr}, {"budget_tokens", opts.budget_tokens}, {"calls", 0}};
  if (res.status != "compacted" || !res.covers_last || !res.covers_first || !res.compaction) return out;
  std::optional<Node> prev = session_notes(store, session);
  Rewrite rw;
  std::optional<std::string> cursor;
  if (prev) {
    out["previous"] = prev->id;
    rw.notes = node_text(*prev);
    if (auto it = prev->metadata.find("notes"); it != prev->metadata.end() && it->is_object())
      if (std::string c = json_str(*it, "cursor"); !c.empty()) cursor = c;
  }
  rw.ids = evicted_since(store, res, cursor, rw.scratch);
  if (rw.scratch) rw.notes.clear();
  out["evicted_rows"] = rw.ids.size();
  if (rw.ids.empty()) return out;

  rewrite_in_chunks(store, summarizer, opts, rw);
  out["calls"] = rw.calls;
  Json event{{"status", rw.failure ? "failed" : "rewritten"}, {"previous", out["previous"]}, {"calls", rw.calls},
             {"evicted_rows", rw.ids.size()}};
  if (rw.failure || rw.notes.empty()) {
    record_failure(store, session, res, rw, out, event);
    return out;
  }
  Node n = notes_node(session, res, rw, out["previous"], summarizer, opts);
  event["id"] = n.id;
  Txn t(store.db());
  store.log_event(session, "compact/notes", *res.compaction, event);
  if (store.append(n) != AppendResult::added) {
    out["status"] = "failed";
    out["error"] = Json{{"code", "notes.exists"}, {"message", fmt::format("notes id '{}' already exists", n.id)}};
    return out;  // the transaction rolls back
  }
  t.commit();
  out["status"] = "rewritten";
  out["id"] = n.id;
  return out;
}

}  // namespace ctxfold
