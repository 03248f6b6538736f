// ctxfold JSONL importer: the canonical node form of node_to_json, one per line, optionally
// preceded by {"schema":"ctxfold.session/1",...} declarations. Ids and payloads are preserved
// exactly (no source metadata is added), so export → import round-trips into the same nodes.
#include "import/ctxfold_jsonl.hpp"

#include <fmt/format.h>

#include <map>

#include "import/formats_common.hpp"
#include "import/import.hpp"
#include "import/jsonl_reader.hpp"
#include "util/error.hpp"

namespace ctxfold {

bool is_ctxfold_session_record(const Json& j) { return j.is_object() && json_str(j, "schema") == kSessionSchema; }

bool is_ctxfold_node_record(const Json& j) {
  if (!j.is_object()) return false;
  if (j.contains("schema")) return json_str(j, "schema") == kNodeSchema;
  return j.contains("content") || j.contains("role") || j.contains("kind");
}

SessionInfo session_from_record(const Json& j) {
  SessionInfo s;
  s.id = json_str(j, "id");
  if (s.id.empty()) throw Error(Exit::bad_input, "input.session", "session record has no \"id\"");
  s.kind = json_str(j, "kind", "main");
  if (auto v = json_str(j, "parent_session"); !v.empty()) s.parent_session = v;
  if (auto v = json_str(j, "parent_node"); !v.empty()) s.parent_node = v;
  if (auto v = json_str(j, "source"); !v.empty()) s.source = v;
  if (auto v = json_str(j, "format"); !v.empty()) s.format = v;
  if (j.contains("metadata") && j["metadata"].is_object()) s.metadata = j["metadata"];
  return s;
}

Node node_from_record(const Json& j, const std::string& default_session, bool* predecessor_given) {
  Node n = node_from_json(j);
  if (n.session.empty()) n.session = default_session;
  if (predecessor_given) *predecessor_given = j.is_object() && j.contains("predecessor");
  return n;
}

void import_ctxfold_jsonl(const std::string& path, ImportSink& sink) {
  const std::string default_session = import_detail::file_stem(path);
  std::string current = default_session;
  std::map<std::string, std::optional<std::string>> last;   // session → last chain node in this file
  std::map<std::string, std::string> declared_head;         // session → "head" of its declaration
  std::vector<std::string> order;                           // sessions in first-seen order
  std::vector<std::pair<std::int64_t, std::string>> pending_bad;

  auto begin = [&](SessionInfo info) {
    if (last.count(info.id)) return;
    if (!info.source) info.source = path;
    if (!info.format) info.format = "ctxfold";
    std::string id = info.id;
    sink.begin_session(std::move(info));
    last[id] = std::nullopt;
    order.push_back(id);
  };
  auto begin_id = [&](const std::string& id) {
    SessionInfo info;
    info.id = id;
    begin(std::move(info));
  };

  JsonlReader reader(
      path, [&](std::int64_t line, const std::string& code, const std::string& msg) { sink.warn(line, code, msg); },
      [&](std::int64_t line, const std::string& raw) { pending_bad.emplace_back(line, raw); },
      sink.max_record_bytes());
  JsonlRecord rec;
  auto flush_bad = [&]() {
    if (pending_bad.empty()) return;
    begin_id(current);
    for (auto& [line, raw] : pending_bad) sink.keep_record(current, line, "line.bad", raw);
    pending_bad.clear();
  };
  while (reader.next(rec)) {
    const Json& v = rec.value;
    if (is_ctxfold_session_record(v)) {
      try {
        SessionInfo info = session_from_record(v);
        current = info.id;
        if (auto h = json_str(v, "head"); !h.empty()) declared_head[info.id] = h;
        begin(std::move(info));
      } catch (const Error& e) {
        flush_bad();
        begin_id(current);
        sink.warn(rec.line, e.code(), e.what());
        sink.keep_record(current, rec.line, "record.invalid", dump_json(v));
      }
      flush_bad();
      continue;
    }
    flush_bad();
    if (json_str(v, "schema") == "ctxfold.export/1") continue;  // export's closing summary record
    if (!is_ctxfold_node_record(v)) {
      begin_id(current);
      std::string schema = json_str(v, "schema");
      // A value that is not an object was reported by the reader ("record.not_object").
      if (v.is_object() && v.contains("schema"))
        sink.warn(rec.line, "record.unknown_schema",
                  fmt::format("schema {} is not one this version reads ({}, {}); kept verbatim", dump_json(v["schema"]),
                              kSessionSchema, kNodeSchema));
      else if (v.is_object())
        sink.warn(rec.line, "record.unknown_type", "record is neither a ctxfold node nor a session; kept verbatim");
      sink.keep_record(current, rec.line, schema.empty() ? std::string("unknown") : schema, dump_json(v));
      continue;
    }
    Node n;
    bool pred_given = false;
    try {
      n = node_from_record(v, current, &pred_given);
    } catch (const Error& e) {
      begin_id(current);
      sink.warn(rec.line, e.code(), std::string(e.what()) + "; kept verbatim");
      sink.keep_record(current, rec.line, "record.invalid", dump_json(v));
      continue;
    }
    begin_id(n.session);
    if (n.id.empty()) n.id = n.session + ":" + std::to_string(rec.line) + (rec.part ? "." + std::to_string(rec.part) : "");
    if (n.is_view()) {
      // A declared summary must replace a segment that exists in its own session (docs/model.md "View nodes").
      if (auto problem = sink.store().coverage_problem(n)) {
        sink.warn(rec.line, "covers.invalid", *problem + "; kept verbatim");
        sink.keep_record(n.session, rec.line, "record.invalid", dump_json(v));
        continue;
      }
    }
    if (!pred_given && !n.is_view()) n.predecessor = last[n.session];
    bool view = n.is_view();
    std::string session = n.session;
    std::string id = sink.add(std::move(n), rec.line);
    if (!view) last[session] = id;
  }
  flush_bad();
  for (const auto& s : order) {
    if (auto it = declared_head.find(s); it != declared_head.end() && sink.has(it->second))
      sink.propose_head(s, it->second);
    else if (last[s])
      sink.propose_head(s, *last[s]);
  }
}

}  // namespace ctxfold
