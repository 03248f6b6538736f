// Gemini CLI chat recording importer (docs/formats/gemini.md): one JSON object per file,
// {sessionId, projectHash, startTime, lastUpdated, messages[], summary?}; and the JSON Lines
// recording (`session-*.jsonl`): a header line {sessionId, projectHash, startTime, lastUpdated,
// kind?} (written again, mid-file, on each resume), then one message record per line, where a
// message written again with the same id replaces the earlier version (assistant turns are
// rewritten as they stream), {"$set":{...}} updates header fields ($set.messages replaces the
// whole list: on each resume and after a chat compression) and {"$rewindTo": id} drops that
// message and everything after it. Every list the file ever held is merged into one node graph
// that loses no turn (gemini/history.hpp); messages convert as gemini/messages.hpp says. A
// sub-agent session (header kind "subagent", file chats/<parent sessionId>/<id>.jsonl) is a
// sidechain of the session whose header sessionId names that folder.
//
// The session id is the file stem: the same sessionId occurs in several files with disjoint
// messages, so sessions are keyed by file. Top-level keys other than messages (summary
// included) become session metadata.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <unordered_map>

#include "import/formats_common.hpp"
#include "import/gemini/history.hpp"
#include "import/gemini/live.hpp"
#include "import/gemini/messages.hpp"
#include "import/import.hpp"
#include "import/jsonl_reader.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::file_name;
using import_detail::file_stem;
using import_detail::line_at;
using gemini_detail::History;
using gemini_detail::ListedMessage;
using gemini_detail::odd_field;
namespace fs = std::filesystem;

constexpr const char* kGeminiFormat = "gemini";

std::optional<std::string> stored_session_with_id(Store& st, const std::string& gemini_session_id) {
  auto& q = st.db().cached(
      "SELECT id FROM sessions WHERE format='gemini' AND json_extract(metadata, '$.sessionId') = ?1 "
      "AND coalesce(json_extract(metadata, '$.kind'), 'main') <> 'subagent' ORDER BY created_seq LIMIT 1");
  ResetOnExit r(q);
  q.bind(1, gemini_session_id);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

/// A header-like record: {sessionId, projectHash, ...} without a message id.
bool is_header(const Json& v) {
  return v.is_object() && v.contains("sessionId") && v.contains("projectHash") && !v.contains("type") &&
         !(v.contains("id") && v["id"].is_string());
}

/// A message with a field of a type Gemini CLI never writes there (odd_field): reported
/// ("record.field_type") and kept verbatim besides being read as well as it can be.
void report_field(const char* field, const std::string& raw, std::int64_t line, const std::string& session,
                  ImportSink& sink) {
  sink.warn(line, "record.field_type",
            fmt::format("message field \"{}\" holds a value of a type Gemini CLI never writes there; read as well as "
                        "it can be, the message kept verbatim",
                        field));
  sink.keep_record(session, line, "message.field_type", raw);
}

void check_fields(const Json& m, std::int64_t line, const std::string& session, ImportSink& sink) {
  if (const char* field = odd_field(m)) report_field(field, dump_json(m), line, session, sink);
}

/// The messages of a list as ListedMessages; an entry that is not a message object is kept as a
/// source record (warning at `line`).
std::vector<ListedMessage> listed(const Json& messages, std::int64_t line, const std::string& session,
                                  ImportSink& sink, std::size_t& anonymous, bool rewritten) {
  std::vector<ListedMessage> out;
  for (const auto& m : messages) {
    if (!m.is_object()) {
      sink.warn(line, "record.unexpected", "a message list entry is not an object; kept verbatim");
      sink.keep_record(session, line, "message.unexpected", dump_json(m));
      continue;
    }
    check_fields(m, line, session, sink);
    std::string id = json_str(m, "id");
    if (id.empty()) id = session + ":" + std::to_string(anonymous++);
    out.push_back(ListedMessage{id, m, line, rewritten});
  }
  return out;
}

/// Thrown by a streamed read (JsonlRecording::index) at a record that rewrites the list: such a
/// file is read whole.
struct NeedsWholeRead {};

/// A JSON Lines recording as it is read: the session's header fields, the list the client holds
/// and what is kept verbatim, until the session is written. A live recording (live.hpp) is read
/// twice instead: with `index` set, its messages only feed the index and what the read reports
/// waits in `deferred` (a rewrite throws NeedsWholeRead); with `emitter` set, its messages go to
/// the emitter as they come and nothing is reported again.
struct JsonlRecording {
  ImportSink& sink;
  gemini_detail::LiveIndex* index = nullptr;
  gemini_detail::LiveEmitter* emitter = nullptr;
  std::uint64_t ordinal = 0;  // message records read (streamed reads)
  std::vector<std::function<void()>> deferred;
  std::string session;
  Json meta = Json::object();
  Json resumes = Json::array();
  std::vector<ListedMessage> state;  // the list the client holds after each record
  std::unordered_map<std::string, std::size_t> at_;  // message id -> its first place in state
  std::vector<std::pair<std::int64_t, std::string>> bad;  // unusable bytes, kept verbatim
  std::vector<std::pair<std::int64_t, Json>> unknown;     // other records, kept verbatim
  std::size_t anonymous = 0;
  std::int64_t messages_seen = 0;
  History history;

  JsonlRecording(ImportSink& s, const std::string& path)
      : sink(s), session(file_stem(path)), history(sink, session, file_name(path)) {}

  /// A report of the read: now, or after the index pass when it stays a streamed read.
  void report(std::function<void()> f) {
    if (index) deferred.push_back(std::move(f));
    else f();
  }

  void upsert(Json m, std::int64_t line) {
    std::string id = json_str(m, "id");
    if (emitter) {
      emitter->message(ordinal++, ListedMessage{std::move(id), std::move(m), line, false});
      return;
    }
    if (const char* field = odd_field(m))
      report([this, field, raw = dump_json(m), line] { report_field(field, raw, line, session, sink); });
    if (index) {
      index->add(ordinal++, id, gemini_detail::answered_call_ids(m));
      return;
    }
    auto [at, added] = at_.try_emplace(id, state.size());
    if (added) state.push_back(ListedMessage{std::move(id), std::move(m), line, false});
    else state[at->second] = ListedMessage{std::move(id), std::move(m), line, false};  // written again: the newest wins
  }

  /// The index pass's reading of a plain message record (RecordProbe), as upsert's of its tree.
  void indexed(gemini_detail::RecordProbe::Seen s) {
    if (s.anonymous) s.id = session + ":" + std::to_string(anonymous++);
    index->add(ordinal++, s.id, s.calls);
    ++messages_seen;
  }

  /// at_ for a state replaced whole.
  void index_state() {
    at_.clear();
    for (std::size_t k = 0; k < state.size(); ++k) at_.try_emplace(state[k].id, k);
  }

  /// A header record (the first, or one a resume writes again).
  void header(const Json& v, std::int64_t line, bool first) {
    if (!first && meta.contains("startTime")) {
      // A resume writes the header again: the first start time stays, the others are listed.
      resumes.push_back(Json{{"line", line}, {"startTime", v.value("startTime", Json())}});
      for (auto it = v.begin(); it != v.end(); ++it)
        if (it.key() != "startTime") meta[it.key()] = it.value();
    } else {
      for (auto it = v.begin(); it != v.end(); ++it) meta[it.key()] = it.value();
    }
  }

  /// A `$set`: header fields, and `messages` replacing the whole list.
  void set(const Json& fields, std::int64_t line) {
    if (index && fields.contains("messages")) throw NeedsWholeRead{};
    for (auto it = fields.begin(); it != fields.end(); ++it) {
      if (it.key() == "messages" && it.value().is_array()) {
        rewrite(listed(it.value(), line, session, sink, anonymous, true));
      } else {
        meta[it.key()] = it.value();
      }
    }
  }

  /// A `$set.messages` list replacing the one the client held.
  void rewrite(std::vector<ListedMessage> list) {
    messages_seen += static_cast<std::int64_t>(list.size());
    // What the client held before the rewrite is merged first, except the new messages
    // the rewrite moves ahead of one the client held before them: a compression records
    // its snapshot and acknowledgement at the end, then lists them before the kept turns.
    std::map<std::string, std::size_t> pos;
    for (std::size_t k = 0; k < list.size(); ++k) pos.emplace(list[k].id, k);
    std::vector<ListedMessage> before;
    std::optional<std::size_t> furthest;  // the latest list position of a message held so far
    for (const auto& m : state) {
      auto p = pos.find(m.id);
      const bool moved = p != pos.end() && !history.knows(m.id) && furthest && *furthest > p->second;
      if (p != pos.end()) furthest = std::max(furthest.value_or(0), p->second);
      if (!moved) before.push_back(m);
    }
    history.merge(before, false);
    history.merge(list, true);
    state = std::move(list);
    index_state();
  }

  /// A `$rewindTo`: that message and everything after it leave the list.
  void rewind(const Json& v, std::int64_t line) {
    if (index) throw NeedsWholeRead{};
    const std::string to = v["$rewindTo"].is_string() ? v["$rewindTo"].get<std::string>() : std::string();
    auto at = at_.find(to);
    if (at == at_.end()) {
      sink.warn(line, "record.rewind_unknown", "rewind to message '" + to + "', which the file never wrote");
    } else {
      history.merge(state, false);  // the rewound turns stay in the ledger, off HEAD's branch
      const std::size_t cut = at->second;
      for (std::size_t k = cut; k < state.size(); ++k)
        if (auto f = at_.find(state[k].id); f != at_.end() && f->second >= cut) at_.erase(f);
      state.erase(state.begin() + static_cast<std::ptrdiff_t>(cut), state.end());
      history.merge(state, false);
    }
  }

  /// One record of the file, by its shape.
  void record(Json&& v, std::int64_t line, bool first) {
    if (is_header(v) || (first && v.is_object() && v.contains("sessionId") && !v.contains("type"))) {
      header(v, line, first);
    } else if (v.is_object() && v.contains("$set") && v["$set"].is_object()) {
      set(v["$set"], line);
    } else if (v.is_object() && v.contains("$rewindTo")) {
      rewind(v, line);
    } else if (v.is_object() && v.contains("id") && v["id"].is_string()) {
      upsert(std::move(v), line);
      ++messages_seen;
    } else if (v.is_object() && v.contains("type") && v.contains("content")) {
      Json m = std::move(v);
      m["id"] = session + ":" + std::to_string(anonymous++);
      upsert(std::move(m), line);
      ++messages_seen;
    } else if (!emitter) {
      unknown.emplace_back(line, std::move(v));
    }
  }

  /// The session row: the header fields, and a sub-agent's link to its parent session.
  SessionInfo session_info(const std::string& path) {
    if (!resumes.empty()) meta["resumes"] = resumes;
    SessionInfo info;
    info.id = session;
    info.source = path;
    info.format = kGeminiFormat;
    info.metadata = meta;
    if (json_str(meta, "kind") == "subagent") {
      // chats/<parent sessionId>/<id>.jsonl: the parent is the session recorded with that id.
      const std::string parent_id = fs::path(path).parent_path().filename().string();
      info.kind = "sidechain";
      info.metadata["parent_session_id"] = parent_id;
      if (auto parent = stored_session_with_id(sink.store(), parent_id))
        info.parent_session = *parent;
      else
        sink.warn(1, "session.parent_missing", "sub-agent session of '" + parent_id + "', which is not imported");
    }
    return info;
  }
};

/// Reads every record of the file into r; the reader's reports go through r.report (none when
/// r feeds an emitter: the index pass made them). The index pass reads a plain message record
/// through a SAX probe, without its tree, and any other record again whole.
void read_records(JsonlRecording& r, const std::string& path, ImportSink& sink) {
  const bool again = r.emitter != nullptr;
  JsonlReader reader(
      path,
      [&](std::int64_t line, const std::string& code, const std::string& msg) {
        if (!again) r.report([&sink, line, code, msg] { sink.warn(line, code, msg); });
      },
      [&](std::int64_t line, const std::string& raw) {
        if (!again) r.bad.emplace_back(line, raw);
      },
      sink.max_record_bytes());
  // The probe's readings of the records parsed but not returned yet (a glued line's records are
  // all parsed before its first is returned).
  std::deque<gemini_detail::RecordProbe::Seen> seen;
  gemini_detail::RecordProbe probe;
  if (r.index) {
    reader.set_parser([&](std::string_view text) {
      probe.reset();
      if (!sax_parse_json(text, probe)) return false;
      seen.push_back(probe.seen());
      return true;
    });
  }
  JsonlRecord rec;
  bool first = true;
  while (reader.next(rec)) {
    if (!r.index) {
      r.record(std::move(rec.value), rec.line, first);
    } else {
      gemini_detail::RecordProbe::Seen s = std::move(seen.front());
      seen.pop_front();
      if (s.plain) r.indexed(std::move(s));
      else r.record(reader.read_at(rec.offset, rec.length, rec.part), rec.line, first);
    }
    first = false;
  }
}

/// The session row and what the read kept verbatim, before the session's nodes.
void begin(JsonlRecording& r, const std::string& path, ImportSink& sink) {
  sink.begin_session(r.session_info(path));
  if (r.messages_seen == 0) sink.warn(1, "session.empty", "a Gemini CLI recording without any message");
  for (auto& [line, raw] : r.bad) sink.keep_record(r.session, line, "line.bad", raw);
  for (auto& [line, v] : r.unknown) sink.keep_record(r.session, line, "record.unknown", dump_json(v));
}

/// A live recording in two streamed passes (live.hpp); false, having reported and stored
/// nothing, when the file rewrites its list.
bool import_live(const std::string& path, ImportSink& sink) {
  gemini_detail::LiveIndex index;
  JsonlRecording r(sink, path);
  r.index = &index;
  try {
    read_records(r, path, sink);
  } catch (const NeedsWholeRead&) {
    return false;
  }
  index.finish();
  for (auto& f : r.deferred) f();
  begin(r, path, sink);
  gemini_detail::LiveEmitter emitter(sink, r.session, file_name(path), index);
  JsonlRecording again(sink, path);
  again.emitter = &emitter;
  read_records(again, path, sink);
  emitter.finish();
  return true;
}

void import_gemini_jsonl(const std::string& path, ImportSink& sink) {
  if (import_live(path, sink)) return;
  JsonlRecording r(sink, path);
  read_records(r, path, sink);
  r.history.merge(r.state, false);
  begin(r, path, sink);
  r.history.emit();
}

}  // namespace

void import_gemini(const std::string& path, ImportSink& sink) {
  if (fs::path(path).extension() == ".jsonl") {
    import_gemini_jsonl(path, sink);
    return;
  }
  if (import_detail::document_too_large(path, sink)) return;
  auto doc = import_detail::parse_document(path, sink);
  std::string session = file_stem(path);
  std::string file = file_name(path);
  SessionInfo info;
  info.id = session;
  info.source = path;
  info.format = kGeminiFormat;
  if (!doc) {
    sink.begin_session(info);
    sink.keep_record(session, 1, "document.malformed", import_detail::read_file_bytes(path));
    return;
  }
  const Json& root = doc->value;
  if (!root.is_object() || !root.contains("messages") || !root["messages"].is_array()) {
    sink.warn(1, "document.unexpected", "not a Gemini CLI session: no messages array");
    sink.begin_session(info);
    sink.keep_record(session, 1, "document.unexpected", doc->text);
    return;
  }
  info.metadata = extra_keys(root, {"messages"});
  sink.begin_session(info);
  if (doc->duplicate_key) sink.keep_record(session, 1, "json.duplicate_key", doc->text);
  std::vector<std::int64_t> lines = import_detail::element_lines(doc->text, "messages");
  const Json& messages = root["messages"];
  std::vector<ListedMessage> list;
  std::size_t anonymous = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto one = listed(Json::array({messages[i]}), line_at(lines, i), session, sink, anonymous, false);
    for (auto& m : one) list.push_back(std::move(m));
  }
  History history(sink, session, file);
  history.merge(list, false);
  history.emit();
}

}  // namespace ctxfold
