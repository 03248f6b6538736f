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

Json rewrite_notes(Store& store, const std::string& session, const CompactResult& res, Summarizer& summarizer,
                   const NotesOptions& opts) {
  Json out{{"status", "skipped"}, {"id", nullptr}, {"previous", nullptr}, {"budget_tokens", opts.budget_tokens}, {"calls", 0}};
  if (res.status != "compacted" || !res.covers_last || !res.covers_first || !res.compaction) return out;
  std::optional<Node> prev = session_notes(store, session);
  std::string notes;
  std::optional<std::string> cursor;
  if (prev) {
    out["previous"] = prev->id;
    notes = node_text(*prev);
    if (auto it = prev->metadata.find("notes"); it != prev->metadata.end() && it->is_object())
      if (std::string c = json_str(*it, "cursor"); !c.empty()) cursor = c;
  }
  // What was evicted since the notes last read: the chain back to their cursor; a cursor no longer
  // on the chain (a rewritten history) means the notes are rewritten from all the fold covers.
  const std::int64_t bound = store.max_seq() + 1;
  std::vector<std::string> ids;
  bool scratch = !cursor;
  if (cursor) {
    try {
      ids = chain_segment(store, *res.covers_last, cursor, std::nullopt, bound);
    } catch (const Error&) {
      scratch = true;
    }
  }
  if (scratch) ids = chain_segment(store, *res.covers_last, std::nullopt, res.covers_first, bound);
  if (scratch) notes.clear();
  out["evicted_rows"] = ids.size();
  if (ids.empty()) return out;

  const std::int64_t window = opts.summarizer_window > 0 ? opts.summarizer_window : summarizer.window_tokens();
  const std::string instructions =
      fmt::format("Notes budget: {} tokens.{}{}", opts.budget_tokens, opts.instructions.empty() ? "" : " ", opts.instructions);
  const std::int64_t overhead = estimate_text_tokens(embedded_prompt(kNotesPrompt)) + estimate_text_tokens(instructions) + 64;
  Sha256 digest;
  int calls = 0;
  std::optional<Error> failure;
  std::size_t next = 0;
  while (next < ids.size() && !failure) {
    const std::int64_t budget = window / 2 - overhead - estimate_text_tokens(notes);
    if (budget < 256) {
      failure = Error(Exit::environment, "summarizer.window",
                      fmt::format("the summarizer window of {} tokens leaves no room next to the notes", window));
      break;
    }
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
    if (transcript.empty()) continue;
    SummaryRequest req;
    req.previous_summary = notes;
    req.transcript = transcript;
    req.instructions = instructions;
    req.max_output_tokens = opts.budget_tokens * 5 / 4;
    req.input_tokens = estimate_text_tokens(notes) + estimate_text_tokens(transcript);
    req.prompt_version = kNotesPrompt;
    digest.update(notes);
    digest.update(std::string_view("\0", 1));
    digest.update(transcript);
    ++calls;
    try {
      SummaryResult r = summarizer.summarize(req);
      std::string text = r.text;
      if (auto bad = clean_summary_text(text)) failure = *bad;
      else notes = std::move(text);
    } catch (const Error& e) {
      failure = e;
    }
  }
  out["calls"] = calls;
  Json event{{"status", failure ? "failed" : "rewritten"}, {"previous", out["previous"]}, {"calls", calls},
             {"evicted_rows", ids.size()}};
  if (failure || notes.empty()) {
    Error e = failure ? *failure : Error(Exit::environment, "summarizer.empty", "nothing readable to write notes from");
    out["status"] = "failed";
    out["error"] = Json{{"code", e.code()}, {"message", e.what()}};
    event["status"] = "failed";
    event["error"] = out["error"];
    Txn t(store.db());
    store.log_event(session, "compact/notes", *res.compaction, event);
    t.commit();
    return out;
  }
  Node n;
  n.id = "notes-" + res.compaction->substr(res.compaction->rfind('-') + 1);
  n.session = session;
  n.kind = kind::kNotes;
  n.role = role::kUser;
  n.predecessor = ids.back();
  n.content = Json::array({Json{{"type", "text"}, {"text", notes}}});
  n.metadata = Json{{"strategy", "notes"},
                    {"origin", "compact"},
                    {"compaction", *res.compaction},
                    {"supersedes", out["previous"]},
                    {"notes", {{"cursor", ids.back()}, {"budget_tokens", opts.budget_tokens}, {"from_scratch", scratch}}},
                    {"provenance",
                     {{"summarizer", {{"kind", summarizer.kind()}, {"model", summarizer.model()}}},
                      {"prompt_version", kNotesPrompt},
                      {"input_digest", digest.hex()},
                      {"calls", calls}}}};
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
