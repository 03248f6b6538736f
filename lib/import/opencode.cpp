// opencode / Kilo CLI SQLite session stores → nodes (docs/formats/opencode.md).
//
// The store is the agent's own database, read read-only: a file with a -wal beside it is opened
// SQLITE_OPEN_READONLY (the agent may be running; the WAL holds its newest writes), one without
// as immutable (nobody writes it; nothing is created beside it). Tables read:
//   migration  id = "<timestamp>_<name>" per applied migration: the schema version check
//   session    id, parent_id (a child session: the task tool's sub-agent), title, directory, version
//   message    id, session_id, time_created, data = JSON {role, parentID, tokens, summary, ...}
//   part       id, message_id, session_id, data = JSON {type: text | reasoning | tool | file |
//              compaction | step-start | step-finish | ...}
// Rows are read in id order (the agent's ids sort by creation time); each session's messages form
// one chain.
#include "import/opencode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "import/formats_common.hpp"
#include "model/node.hpp"
#include "store/db.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

using import_detail::file_name;
using import_detail::image_from_url;
using import_detail::opaque_block;
using import_detail::text_block;

/// The newest migration of each store this importer was checked against (opencode 1.18.33, Kilo
/// CLI 7.7.7); a store migrated past it has a schema nobody has read yet.
constexpr const char* kNewestOpencode = "20260622202450_simplify_session_input";
constexpr const char* kNewestKilo = "20260907102000_kilocode_model_usage_index";

/// What opencode sends in place of a compaction part (the user turn that asked for the summary).
constexpr const char* kCompactionPrompt = "What did we do so far?";
/// What it sends for a tool output it pruned (state.time.compacted) and for a call that never ended.
constexpr const char* kClearedOutput = "[Old tool result content cleared]";
constexpr const char* kInterrupted = "[Tool execution was interrupted]";

/// Milliseconds since the epoch as ISO 8601 UTC with milliseconds, as the other formats record times.
std::string iso_time(std::int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, ms % 1000);
}

bool sqlite_header(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char head[16] = {};
  std::size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  return n == sizeof head && std::string_view(head, sizeof head) == std::string_view("SQLite format 3\0", 16);
}

/// Opens the agent's store without ever writing it (see the file comment).
Db open_store(const std::string& path) {
  std::error_code ec;
  const bool wal = std::filesystem::exists(path + "-wal", ec);
  return Db(path, true, !wal);
}

bool has_columns(Db& db, const char* table, std::initializer_list<const char*> cols) {
  for (const char* c : cols) {
    Stmt q = db.prepare(fmt::format("SELECT 1 FROM pragma_table_info('{}') WHERE name=?1", table));
    q.bind(1, c);
    if (!q.step()) return false;
  }
  return true;
}

/// "opencode" / "kilo" for a store with the tables read here, nullopt otherwise; the version check
/// of opencode_store_format.
std::optional<std::string> store_format(Db& db, const std::string& path) {
  for (const char* t : {"session", "message", "part", "migration"})
    if (!db.has_schema_object(t)) return std::nullopt;
  if (!has_columns(db, "session", {"id", "parent_id", "title", "directory", "time_created"}) ||
      !has_columns(db, "message", {"id", "session_id", "time_created", "data"}) ||
      !has_columns(db, "part", {"id", "message_id", "session_id", "data"}) || !has_columns(db, "migration", {"id"}))
    return std::nullopt;
  Stmt q = db.prepare("SELECT max(id), max(id LIKE '%\\_kilocode\\_%' ESCAPE '\\') FROM migration");
  q.step();
  const std::string newest = q.opt_text(0).value_or("");
  const bool kilo = q.opt_int64(1).value_or(0) != 0;
  const std::string known = kilo ? kNewestKilo : kNewestOpencode;
  if (newest.empty() || newest > known)
    throw Error(Exit::bad_input, "import.unknown_version",
                fmt::format("{}: {} session store at schema migration '{}', {} (the newest this importer reads is '{}')",
                            path, kilo ? "Kilo CLI" : "opencode", newest.empty() ? "none" : newest,
                            newest.empty() ? "which records no migration" : "newer than any it was checked against",
                            known),
                "docs/formats/opencode.md names the versions read; an older ctxfold or a newer one may read it");
  return kilo ? "kilo" : "opencode";
}

/// One `part` row.
struct Part {
  std::int64_t rowid = 0;
  std::string id;
  Json data;
};

/// One `message` row with its parts, in id order; or a message the agent removed, rebuilt from
/// the `event` log (removed: rowid and the parts' rowids are then `event` rowids).
struct Message {
  std::int64_t rowid = 0;
  std::string id;
  Json data;
  std::vector<Part> parts;
  bool removed = false;
};

Json parse_row(const std::string& text, ImportSink& sink, const char* table, std::int64_t rowid) {
  try {
    Json v = parse_json(text);
    if (v.is_object()) return v;
  } catch (const std::exception&) {
  }
  sink.warn(rowid, "row.malformed", fmt::format("{} row {}: its data column is not a JSON object", table, rowid));
  return Json::object();
}

/// The session's messages with their parts.
std::vector<Message> read_messages(Db& db, const std::string& session, ImportSink& sink) {
  std::vector<Message> out;
  std::map<std::string, std::size_t> at;
  Stmt q = db.prepare("SELECT rowid, id, data FROM message WHERE session_id=?1 ORDER BY id");
  q.bind(1, session);
  while (q.step()) {
    at[q.text(1)] = out.size();
    out.push_back(Message{q.int64(0), q.text(1), parse_row(q.text(2), sink, "message", q.int64(0)), {}});
  }
  Stmt p = db.prepare("SELECT rowid, id, message_id, data FROM part WHERE session_id=?1 ORDER BY id");
  p.bind(1, session);
  while (p.step()) {
    auto it = at.find(p.text(2));
    Part part{p.int64(0), p.text(1), parse_row(p.text(3), sink, "part", p.int64(0))};
    if (it == at.end()) {
      sink.keep_record(session, part.rowid, "part/orphan", dump_json(part.data));
      sink.warn(part.rowid, "part.orphan",
                fmt::format("part row {} ('{}') names message '{}', which the store does not hold; kept as a record",
                            part.rowid, part.id, p.text(2)));
      continue;
    }
    out[it->second].parts.push_back(std::move(part));
  }
  return out;
}

/// The object without the keys the `event` log adds to a row's data (its id and owners).
Json without(Json v, std::initializer_list<const char*> keys) {
  for (const char* k : keys) v.erase(k);
  return v;
}

/// The messages of the session the agent removed (a revert, then a new prompt: the rows are
/// deleted), rebuilt from the `event` log: each `message.removed` message's last
/// `message.updated` info and its parts' last `message.part.updated`, in id order
/// (docs/formats/opencode.md "The event log"). Parts removed from a message still stored are kept
/// as source records. Nothing when the store has no event table of that shape.
std::vector<Message> removed_messages(Db& db, const std::string& session, const std::vector<Message>& stored,
                                      ImportSink& sink) {
  std::vector<Message> out;
  if (!has_columns(db, "event", {"aggregate_id", "seq", "type", "data"})) return out;
  std::map<std::string, Message> info;                    // message id -> its last state
  std::map<std::string, std::pair<std::int64_t, Json>> parts;  // part id -> (rowid, last state)
  std::set<std::string> removed, parts_removed;
  Stmt q = db.prepare("SELECT rowid, type, data FROM event WHERE aggregate_id=?1 ORDER BY seq");
  q.bind(1, session);
  while (q.step()) {
    const std::string type = q.text(1);
    const Json d = parse_row(q.text(2), sink, "event", q.int64(0));
    if (type.starts_with("message.updated.") && d.contains("info") && d["info"].is_object()) {
      const std::string id = json_str(d["info"], "id");
      info[id] = Message{q.int64(0), id, without(d["info"], {"id", "sessionID"}), {}, true};
    } else if (type.starts_with("message.part.updated.") && d.contains("part") && d["part"].is_object()) {
      parts[json_str(d["part"], "id")] = {q.int64(0), d["part"]};
    } else if (type.starts_with("message.removed.")) {
      removed.insert(json_str(d, "messageID"));
    } else if (type.starts_with("message.part.removed.")) {
      parts_removed.insert(json_str(d, "partID"));
    }
  }
  std::set<std::string> kept;
  for (const Message& m : stored) kept.insert(m.id);
  for (const auto& [id, p] : parts) {
    const std::string owner = json_str(p.second, "messageID");
    if (removed.count(owner) && !kept.count(owner) && info.count(owner))
      info[owner].parts.push_back(Part{p.first, id, without(p.second, {"id", "messageID", "sessionID"})});
    else if (parts_removed.count(id) && kept.count(owner))
      sink.keep_record(session, p.first, "event/part.removed", dump_json(p.second));
  }
  for (auto& [id, m] : info)
    if (removed.count(id) && !kept.count(id)) out.push_back(std::move(m));
  return out;
}

/// A tool part's result block (docs/formats/opencode.md "Tool parts").
Json tool_result(const Json& part) {
  const Json state = part.contains("state") && part["state"].is_object() ? part["state"] : Json::object();
  const std::string status = json_str(state, "status");
  Json r{{"type", "tool_result"}, {"tool_use_id", json_str(part, "callID")}};
  const bool pruned = state.contains("time") && state["time"].is_object() && state["time"].contains("compacted");
  if (status == "completed") {
    r["content"] = pruned ? std::string(kClearedOutput) : json_str(state, "output");
    r["is_error"] = false;
  } else if (status == "error") {
    r["content"] = json_str(state, "error");
    r["is_error"] = true;
  } else {
    r["content"] = kInterrupted;
    r["is_error"] = true;
  }
  return r;
}

class OpencodeImporter {
 public:
  OpencodeImporter(const std::string& path, ImportSink& sink, std::string format)
      : path_(path), file_(file_name(path)), sink_(sink), format_(std::move(format)) {}

  void run() {
    Db db = open_store(path_);
    if (!store_format(db, path_))
      throw Error(Exit::bad_input, "import.unknown_format",
                  fmt::format("{}: not an opencode or Kilo CLI session store (no session, message, part and "
                              "migration tables of that shape)",
                              path_));
    // Parents before their children: a child session is created after the call that starts it.
    Stmt q = db.prepare(
        "SELECT rowid, id, parent_id, title, directory, version, slug, time_created FROM session "
        "ORDER BY time_created, id");
    std::vector<SessionInfo> sessions;
    while (q.step()) sessions.push_back(session_info(q));
    if (sessions.empty()) sink_.warn(0, "document.empty", fmt::format("no sessions in the {} store", format_));
    for (SessionInfo& info : sessions) import_session(db, std::move(info));
  }

 private:
  SessionInfo session_info(Stmt& q) {
    SessionInfo info;
    info.id = q.text(1);
    info.source = path_;
    info.format = format_;
    if (auto parent = q.opt_text(2)) {
      info.kind = "sidechain";
      info.parent_session = *parent;
    }
    const char* keys[] = {"title", "cwd", "version", "slug"};  // cwd: the session's directory
    for (int c = 3; c < 7; ++c)
      if (auto v = q.opt_text(c)) info.metadata[keys[c - 3]] = *v;
    info.metadata["time_created"] = q.int64(7);
    return info;
  }

  void import_session(Db& db, SessionInfo info) {
    session_ = info.id;
    if (info.parent_session) {
      auto it = launched_by_.find(session_);
      if (it != launched_by_.end()) info.parent_node = it->second;
    }
    sink_.begin_session(std::move(info));
    tip_.reset();
    spine_.clear();
    compaction_.reset();
    std::vector<Message> msgs = read_messages(db, session_, sink_);
    for (Message& m : removed_messages(db, session_, msgs, sink_)) msgs.push_back(std::move(m));
    std::stable_sort(msgs.begin(), msgs.end(), [](const Message& a, const Message& b) { return a.id < b.id; });
    // A run of removed messages is a branch: what follows it goes on from where it began.
    std::optional<std::pair<std::optional<std::string>, std::vector<std::string>>> fork;
    for (Message& m : msgs) {
      if (m.removed && !fork) fork.emplace(tip_, spine_);
      if (!m.removed && fork) {
        std::tie(tip_, spine_) = *fork;
        fork.reset();
      }
      message(m);
    }
    if (fork) std::tie(tip_, spine_) = *fork;  // HEAD stays where the store's messages end
    if (tip_) sink_.propose_head(session_, *tip_);
  }

  Json source(const char* table, std::int64_t rowid) const {
    Json s = import_detail::source_meta(format_, file_, 0);
    s["table"] = table;
    s["rowid"] = rowid;
    return s;
  }

  /// Appends a chain node after the tip.
  void append(Node n, std::int64_t rowid) {
    n.session = session_;
    n.predecessor = tip_;
    n.kind = kind::kMessage;
    tip_ = sink_.add(std::move(n), rowid);
    spine_.push_back(*tip_);
  }

  void message(Message& m) {
    const std::string role = json_str(m.data, "role");
    if (role == "user") return user_message(m);
    if (role == "assistant" && m.data.value("summary", false) == true) return summary_message(m);
    if (role == "assistant") return assistant_message(m);
    sink_.warn(m.rowid, "record.unknown_type",
               fmt::format("message row {} ('{}') has role '{}'; kept as a source record", m.rowid, m.id, role));
    sink_.keep_record(session_, m.rowid, "message", dump_json(m.data));
  }

  /// Keeps a part no node holds as a source record.
  void keep_part(const Part& p) {
    sink_.keep_record(session_, p.rowid, "part/" + json_str(p.data, "type", "unknown"), dump_json(p.data));
  }

  /// A user-side block of a text or file part; nullopt when the part sends nothing.
  std::optional<Json> user_block(const Part& p) {
    const std::string type = json_str(p.data, "type");
    if (type == "text") {
      if (p.data.value("ignored", false) == true) return std::nullopt;
      return text_block(json_str(p.data, "text"));
    }
    if (type == "file" && json_str(p.data, "mime").rfind("image/", 0) == 0) return image_from_url(json_str(p.data, "url"));
    if (type == "file") return opaque_block(format_, p.data);
    return std::nullopt;
  }

  void user_message(Message& m) {
    Node n;
    n.id = m.id;
    n.role = role::kUser;
    for (const Part& p : m.parts) {
      const std::string type = json_str(p.data, "type");
      if (type == "compaction") {
        compaction_ = Compaction{m.id, m.rowid, p.data};
      } else if (auto b = user_block(p)) {
        n.content.push_back(std::move(*b));
      } else {
        keep_part(p);
      }
    }
    if (compaction_ && compaction_->user_id == m.id) {
      if (!n.content.empty()) compaction_->extra = std::move(n.content);
      return;
    }
    meta(n, m, "message");
    append(std::move(n), m.rowid);
  }

  void meta(Node& n, const Message& m, const char* table) {
    for (const char* k : {"agent", "mode", "modelID", "providerID", "finish", "cost"})
      if (m.data.contains(k)) n.metadata[k] = m.data[k];
    if (m.data.contains("model")) n.metadata["model"] = m.data["model"];
    else if (m.data.contains("modelID")) n.metadata["model"] = m.data["modelID"];
    if (m.data.contains("time") && m.data["time"].is_object() && m.data["time"].contains("created") &&
        m.data["time"]["created"].is_number_integer())
      n.metadata["timestamp"] = iso_time(m.data["time"]["created"].get<std::int64_t>());
    if (m.data.contains("error")) n.metadata["error"] = m.data["error"];
    n.metadata["source"] = source(m.removed ? "event" : table, m.rowid);
    if (m.removed) n.metadata["removed"] = true;
  }

  /// An assistant message: one assistant node per step that called tools, each followed by a tool
  /// node with the results, the usage on the last assistant node.
  void assistant_message(Message& m) {
    std::vector<Json> blocks, results;
    int step = 0;
    auto id_of = [&](int k) { return k == 0 ? m.id : fmt::format("{}.{}", m.id, k); };
    auto flush = [&](bool last) {
      Node a;
      a.id = id_of(step);
      a.role = role::kAssistant;
      a.content = Json(blocks);
      meta(a, m, "message");
      if (last && m.data.contains("tokens")) a.metadata["usage"] = m.data["tokens"];
      append(std::move(a), m.rowid);
      if (!results.empty()) {
        Node t;
        t.id = id_of(step) + "/tools";
        t.role = role::kTool;
        t.content = Json(results);
        t.metadata["source"] = source(m.removed ? "event" : "message", m.rowid);
        if (m.removed) t.metadata["removed"] = true;
        append(std::move(t), m.rowid);
      }
      blocks.clear();
      results.clear();
      ++step;
    };
    for (const Part& p : m.parts) {
      const std::string type = json_str(p.data, "type");
      if (type == "step-start" && !results.empty()) flush(false);
      if (type == "text" || type == "reasoning") {
        const std::string text = json_str(p.data, "text");
        if (text.empty() || p.data.value("ignored", false) == true) continue;
        blocks.push_back(type == "text" ? text_block(text) : Json{{"type", "thinking"}, {"thinking", text}});
      } else if (type == "tool") {
        tool_part(p, id_of(step), blocks, results);
      } else if (type != "step-start" && type != "step-finish") {
        keep_part(p);
      }
    }
    flush(true);
  }

  void tool_part(const Part& p, const std::string& node_id, std::vector<Json>& blocks, std::vector<Json>& results) {
    const Json state = p.data.contains("state") && p.data["state"].is_object() ? p.data["state"] : Json::object();
    blocks.push_back(Json{{"type", "tool_use"},
                          {"id", json_str(p.data, "callID")},
                          {"name", json_str(p.data, "tool")},
                          {"input", state.contains("input") ? state["input"] : Json::object()}});
    results.push_back(tool_result(p.data));
    // The task tool runs a sub-agent in a child session; its metadata names it.
    if (state.contains("metadata") && state["metadata"].is_object())
      for (const char* k : {"sessionId", "sessionID"})
        if (state["metadata"].contains(k) && state["metadata"][k].is_string())
          launched_by_[state["metadata"][k].get<std::string>()] = node_id;
  }

  /// The summary message answering a compaction request: one summary view node covering the chain
  /// so far, holding what the agent sends in its place from then on (the compaction prompt as a
  /// user turn, the summary as an assistant turn). The chain goes on from the last covered node.
  void summary_message(Message& m) {
    Node n;
    n.id = m.id;
    n.session = session_;
    n.kind = kind::kSummary;
    n.role = role::kUser;
    n.covers_ids = spine_;
    Json history = Json::array();
    Json asked = compaction_ && !compaction_->extra.empty() ? compaction_->extra : Json::array({text_block(kCompactionPrompt)});
    history.push_back(Json{{"type", "message"}, {"role", "user"}, {"blocks", asked.size()}});
    for (auto& b : asked) n.content.push_back(b);
    std::size_t said = 0;
    for (const Part& p : m.parts) {
      if (json_str(p.data, "type") == "text" && !json_str(p.data, "text").empty()) {
        n.content.push_back(text_block(json_str(p.data, "text")));
        ++said;
      } else if (json_str(p.data, "type") != "step-start" && json_str(p.data, "type") != "step-finish") {
        keep_part(p);
      }
    }
    history.push_back(Json{{"type", "message"}, {"role", "assistant"}, {"blocks", said}});
    if (n.covers_ids.empty() || said == 0) {
      sink_.warn(m.rowid, "compaction.empty",
                 fmt::format("message row {} ('{}'): a {} summary {}; kept as a record only", m.rowid, m.id, format_,
                             said == 0 ? "without text" : "with nothing before it"));
      sink_.keep_record(session_, m.rowid, "message/summary", dump_json(m.data));
      compaction_.reset();
      return;
    }
    meta(n, m, "message");
    n.metadata["strategy"] = "rolling";
    n.metadata["origin"] = "import";
    n.metadata["format"] = format_;
    n.metadata["recap"] = false;
    n.metadata["replacement_history"] = std::move(history);
    if (m.data.contains("tokens")) n.metadata["usage"] = m.data["tokens"];
    if (compaction_) {
      n.metadata["compaction_message"] = compaction_->user_id;
      n.metadata["trigger"] = compaction_->part.value("auto", false) == true ? "auto" : "manual";
    }
    compaction_.reset();
    sink_.add(std::move(n), m.rowid);
  }

  struct Compaction {
    std::string user_id;
    std::int64_t rowid = 0;
    Json part;
    Json extra = Json::array();
  };

  std::string path_, file_;
  ImportSink& sink_;
  std::string format_;
  std::string session_;
  std::optional<std::string> tip_;
  std::vector<std::string> spine_;                 // the session's chain so far, root first
  std::optional<Compaction> compaction_;           // a compaction asked for and not yet answered
  std::map<std::string, std::string> launched_by_; // child session -> the task call's tool_use id
};

}  // namespace

std::optional<std::string> opencode_store_format(const std::string& path) {
  if (!sqlite_header(path)) return std::nullopt;
  try {
    Db db = open_store(path);
    return store_format(db, path);
  } catch (const Error& e) {
    if (e.code() == "import.unknown_version") throw;
    return std::nullopt;
  }
}

void import_opencode(const std::string& path, ImportSink& sink) { OpencodeImporter(path, sink, "opencode").run(); }
void import_kilo(const std::string& path, ImportSink& sink) { OpencodeImporter(path, sink, "kilo").run(); }

}  // namespace ctxfold
