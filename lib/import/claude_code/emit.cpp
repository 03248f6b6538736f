// Claude Code importer, pass 2: node assembly and writing, parents first, then HEAD.

#include "import/claude_code/skeleton.hpp"

namespace ctxfold::cc_import {

std::string Importer::raw_bytes(const Line& ln) {
  if (!raw_.is_open()) raw_.open(path_, std::ios::binary);
  raw_.clear();
  raw_.seekg(static_cast<std::streamoff>(ln.offset));
  std::string bytes(ln.length, '\0');
  raw_.read(bytes.data(), static_cast<std::streamsize>(ln.length));
  bytes.resize(static_cast<std::size_t>(raw_.gcount()));
  if (!bytes.empty() && bytes.back() == '\r') bytes.pop_back();
  bytes.erase(std::remove(bytes.begin(), bytes.end(), '\0'), bytes.end());
  return utf8_sanitize(bytes);
}

Json Importer::rendered_blocks(const Line& ln, const Json& record) {
  Json out = Json::array();
  auto it = record.find("rendered");
  if (it == record.end() || !it->is_array()) return out;
  Json extras = Json::array();
  for (const auto& r : *it) {
    const Json* c = r.is_object() && r.contains("content") ? &r["content"] : nullptr;
    if (c && c->is_string()) {
      if (!c->get_ref<const std::string&>().empty()) out.push_back(Json{{"type", "text"}, {"text", *c}});
    } else if (c && c->is_array()) {
      for (const auto& b : *c) out.push_back(convert_block(b, ln.line, extras, out.size()));
    } else {
      sink_.warn(ln.line, "attachment.rendered_shape", "an attachment's rendered entry has no content; kept in metadata");
    }
  }
  return out;
}

/// Ends the last block of blocks with a newline when it is text that does not end with one: the
/// seam where the client joins the next text to it.
static void end_with_newline(Json& blocks) {
  if (!blocks.is_array() || blocks.empty()) return;
  Json& last = blocks.back();
  if (!last.is_object() || str_at(last, "type") != "text" || !last.contains("text") || !last["text"].is_string()) return;
  std::string t = last["text"].get<std::string>();
  if (t.empty() || t.back() != '\n') last["text"] = t + "\n";
}

void Importer::deliver_attachments(int host, Json& content, Json& meta) {
  auto it = delivered_.find(host);
  if (it == delivered_.end()) return;
  Json before = Json::array();
  Json listed = Json::array();
  for (const Delivered& d : it->second) {
    const Line& ln = first_line(d.plan);
    Json v = reader_->read_at(ln.offset, ln.length, ln.part);
    Json blocks = v.is_object() ? rendered_blocks(ln, v) : Json::array();
    const char* where = d.at == Placement::before ? "before" : d.at == Placement::into_result ? "tool_result" : "beside";
    std::string type = is_obj(v, "attachment") ? str_at(v["attachment"], "type") : std::string();
    listed.push_back(Json{{"id", plan_id(d.plan)}, {"line", ln.line}, {"type", type}, {"placement", where}});
    for (auto& b : blocks) {
      if (d.at == Placement::before) {
        before.push_back(std::move(b));
      } else if (d.at == Placement::beside || !b.contains("text")) {
        content.push_back(std::move(b));
      } else {
        // Appended to the last tool result's text (its trailing whitespace trimmed, a blank line between).
        Json* target = nullptr;
        for (auto& c : content)
          if (c.is_object() && str_at(c, "type") == "tool_result") target = &c;
        if (!target) {
          content.push_back(std::move(b));
          continue;
        }
        Json& tc = (*target)["content"];
        if (tc.is_string()) {
          std::string t = tc.get<std::string>();
          while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\n' || t.back() == '\r')) t.pop_back();
          tc = t + "\n\n" + b["text"].get<std::string>();
        } else if (tc.is_array()) {
          end_with_newline(tc);
          tc.push_back(std::move(b));
        } else {
          tc = b["text"];
        }
      }
    }
  }
  if (!before.empty()) {
    // The client joins the attachments' text and the record's own text with a newline at the seam.
    if (!content.empty() && content.front().is_object() && str_at(content.front(), "type") == "text")
      end_with_newline(before);
    for (auto& c : content) before.push_back(std::move(c));
    content = std::move(before);
  }
  meta["attachments"] = std::move(listed);
}

/// The system prompt of a request shape as one text (its text blocks joined with "\n") and its
/// blocks and tools, as metadata (docs/formats/claude-code.md "System prompt").
static Json shape_metadata(const Json& shape) {
  Json out = Json::object();
  std::string text;
  Json blocks = Json::array();
  if (auto s = shape.find("system"); s != shape.end()) {
    if (s->is_string()) {
      text = s->get<std::string>();
      blocks.push_back(Json{{"type", "text"}, {"text", text}});
    } else if (s->is_array()) {
      for (const auto& b : *s) {
        if (!b.is_object() || str_at(b, "type") != "text") continue;
        if (!text.empty()) text += "\n";
        text += str_at(b, "text");
        blocks.push_back(Json{{"type", "text"}, {"text", str_at(b, "text")}});
      }
    }
  }
  out["system_prompt"] = text;
  out["system_blocks"] = std::move(blocks);
  out["tools"] = shape.contains("tools") && shape["tools"].is_array() ? shape["tools"] : Json::array();
  return out;
}

void Importer::read_request_shapes() {
  const std::uint32_t t_shape = sk_.ids.intern("api-request-shape");
  const std::uint32_t t_request = sk_.ids.intern("api-request");
  std::string newest;
  for (const Line& ln : sk_.lines) {
    if (ln.kind != LineKind::keep || (ln.type != t_shape && ln.type != t_request)) continue;
    Json v = reader_->read_at(ln.offset, ln.length, ln.part);
    if (!v.is_object()) continue;
    const std::string hash = str_at(v, "shapeHash");
    if (hash.empty()) continue;
    if (ln.type == t_shape) {
      if (is_obj(v, "shape")) {
        Json m = shape_metadata(v["shape"]);
        m["system_prompt_source"] = Json{{"file", base_}, {"line", ln.line}, {"shape", hash}};
        shapes_[hash] = std::make_shared<const Json>(std::move(m));
        newest = hash;
      }
    } else {
      auto known = shapes_.find(hash);
      shape_of_request_[str_at(v, "id")] = {hash, known == shapes_.end() ? nullptr : known->second};
    }
  }
  if (resume_) {
    // Resumed: the shape the newest stored request of the session named, as a whole read would
    // have it when it reaches this run's first request.
    auto& q = sink_.store().db().cached(
        "SELECT json_extract(metadata, '$.request_shape') FROM nodes WHERE session=?1 AND "
        "json_extract(metadata, '$.request_shape') IS NOT NULL ORDER BY seq DESC LIMIT 1");
    ResetOnExit r(q);
    q.bind(1, sessions_[0].info.id);
    if (q.step()) last_shape_ = q.text(0);
  }
  if (newest.empty()) {
    // No shape recorded: the newest prompt_snapshot attachment (its systemPrompt sections are the
    // prompt's second block joined with a blank line; the leading identity block is not in it).
    const std::uint32_t t_attachment = sk_.ids.intern("attachment");
    for (std::size_t k = sk_.lines.size(); k-- > 0;) {
      const Line* it = &sk_.lines[k];
      if (it->kind != LineKind::node || it->type != t_attachment || it->injected) continue;
      Json v = reader_->read_at(it->offset, it->length, it->part);
      if (!is_obj(v, "attachment") || str_at(v["attachment"], "type") != "prompt_snapshot") continue;
      const Json& a = v["attachment"];
      if (!a.contains("systemPrompt") || !a["systemPrompt"].is_array()) continue;
      std::string text;
      for (const auto& sec : a["systemPrompt"])
        if (sec.is_string()) text += (text.empty() ? "" : "\n\n") + sec.get<std::string>();
      Json tools = Json::array();
      if (a.contains("tools") && a["tools"].is_array())
        for (const auto& t : a["tools"])
          if (t.is_object()) tools.push_back(is_obj(t, "schema") ? t["schema"] : t);
      Json m = shape_metadata(Json{{"system", Json::array({Json{{"type", "text"}, {"text", text}}})}, {"tools", tools}});
      m["system_prompt_source"] = Json{{"file", base_}, {"line", it->line}, {"prompt_snapshot", sk_.str(it->uuid)}};
      for (auto kv = m.begin(); kv != m.end(); ++kv) sessions_[0].info.metadata[kv.key()] = kv.value();
      break;
    }
    return;
  }
  // The session starts with the newest shape its file holds (each assistant node also names its
  // request's shape, with the prompt in full where it changed).
  if (!newest.empty())
    for (auto it = shapes_[newest]->begin(); it != shapes_[newest]->end(); ++it)
      sessions_[0].info.metadata[it.key()] = it.value();
}

/// What build() gathers from a plan's lines before the node is finished.
struct Importer::Built {
  Node n;
  Json meta = Json::object();
  Json content = Json::array();
  Json extras = Json::array();
  Json parts = Json::array();
  bool any_result = false;
  bool all_result = true;
  Json usage;
  std::string stop_reason;
};

Json Importer::source_of(const Line& first) {
  Json source = Json::object();
  source["format"] = kFormat;
  source["file"] = first.injected ? injected_[first.offset].file : base_;
  source["line"] = first.line;
  if (first.glued) source["part"] = first.part;
  source["uuid"] = sk_.str(first.uuid);
  return source;
}

void Importer::add_event_line(int li, Json v, Built& b) {
  const Line& ln = sk_.lines[li];
  Json& meta = b.meta;
  const std::string_view ln_type = sk_.ids.view(ln.type);
  std::string sub = str_at(v, "subtype");
  if (sub.empty() && is_obj(v, "data")) sub = str_at(v["data"], "type");
  meta["event"] = sub.empty() ? std::string(ln_type) : fmt::format("{}/{}", ln_type, sub);
  if (ln.type == sk_.t_system) {
    auto c = v.find("content");
    if (c != v.end() && c->is_string() && !c->get<std::string>().empty())
      b.content.push_back(Json{{"type", "text"}, {"text", c->get<std::string>()}});
  }
  if (ln.boundary) {
    const std::uint32_t lp = sk_.logical_parent_of(li);
    meta["logical_parent"] = lp == 0 ? Json(nullptr) : Json(sk_.str(lp));
    if (is_obj(v, "compactMetadata")) meta["compact"] = v["compactMetadata"];
  }
  meta["raw"] = std::move(v);
}

void Importer::add_message_content(const Json* c, const Line& ln, Built& b) {
  Json& content = b.content;
  if (c && c->is_string()) {
    content.push_back(Json{{"type", "text"}, {"text", c->get<std::string>()}});
    b.all_result = false;
  } else if (c && c->is_array()) {
    for (const auto& blk : *c) {
      bool is_result = blk.is_object() && str_at(blk, "type") == "tool_result";
      b.any_result = b.any_result || is_result;
      b.all_result = b.all_result && is_result;
      content.push_back(convert_block(blk, ln.line, b.extras, content.size()));
    }
  } else if (c && !c->is_null()) {
    content.push_back(Json{{"type", "opaque"}, {"provider", "anthropic"}, {"data", *c}});
    b.all_result = false;
  }
}

void Importer::note_assistant_line(const Line& ln, const Json& v, const Json& msg, Built& b) {
  Json& meta = b.meta;
  if (msg.contains("usage")) b.usage = msg["usage"];
  std::string sr = str_at(msg, "stop_reason");
  if (!sr.empty()) b.stop_reason = sr;
  if (!meta.contains("model") && msg.contains("model")) meta["model"] = msg["model"];
  if (!meta.contains("message_id")) meta["message_id"] = sk_.str(ln.msg_id);
  if (!meta.contains("request_id") && v.contains("requestId")) meta["request_id"] = v["requestId"];
  if (!meta.contains("request_ref") && v.contains("requestRef") && v["requestRef"].is_string()) {
    meta["request_ref"] = v["requestRef"];
    auto sh = shape_of_request_.find(v["requestRef"].get<std::string>());
    if (sh != shape_of_request_.end()) {
      meta["request_shape"] = sh->second.first;
      const Json* full = sh->second.second.get();
      if (sh->second.first != last_shape_ && full)
        for (auto it = full->begin(); it != full->end(); ++it) meta[it.key()] = it.value();
      last_shape_ = sh->second.first;
    }
  }
}

void Importer::add_message_line(const Line& ln, Json v, Built& b) {
  Json& meta = b.meta;
  static const Json kNull;
  auto mit = v.find("message");
  const Json& msg = mit == v.end() ? kNull : *mit;
  const Json* c = msg.is_object() && msg.contains("content") ? &msg["content"] : nullptr;
  add_message_content(c, ln, b);
  if (ln.type == sk_.t_assistant) note_assistant_line(ln, v, msg, b);
  if (v.value("isMeta", false) == true) meta["is_meta"] = true;
  if (v.value("isSidechain", false) == true) meta["is_sidechain"] = true;
  if (v.contains("agentId")) meta["agent_id"] = v["agentId"];
  if (ln.injected) meta["spliced_from_worker"] = true;
  if (c && c->is_array() && ln.type == sk_.t_user) note_hook_blocked(*c, v, meta);
  if (v.contains("toolUseResult")) {
    meta["tool_use_result"] = v["toolUseResult"];
    v.erase("toolUseResult");
  }
  Json env = std::move(v);
  if (env["message"].is_object()) env["message"].erase("content");
  Json part = Json::object();
  part["line"] = ln.line;
  if (ln.glued) part["part"] = ln.part;
  part["record"] = std::move(env);
  b.parts.push_back(std::move(part));
}

void Importer::finish_message(int p, bool own_attachment, Built& b) {
  const Plan& pl = plans_[p];
  const Line& first = sk_.lines[pl.first];
  Node& n = b.n;
  Json& meta = b.meta;
  Json& content = b.content;
  if (own_attachment) {
    // An attachment the client sends as a user message of its own.
    n.kind = kind::kMessage;
    n.role = role::kUser;
    const Line& ln = sk_.lines[pl.first];
    content = rendered_blocks(ln, meta["raw"]);
    meta["attachment"] = meta.value("event", std::string());
    if (seam_.count(p)) end_with_newline(content);
  } else if (auto h = host_of_.find(p); h != host_of_.end()) {
    meta["delivered_in"] = final_id(h->second);
  }
  if (n.kind != kind::kEvent && !own_attachment) {
    meta["source"]["parts"] = std::move(b.parts);
    if (first.type == sk_.t_assistant) {
      n.role = role::kAssistant;
      if (!b.usage.is_null()) meta["usage"] = b.usage;
      if (!b.stop_reason.empty()) meta["stop_reason"] = b.stop_reason;
    } else {
      n.role = b.any_result && b.all_result && !content.empty() ? role::kTool : role::kUser;
    }
    if (!b.extras.empty()) meta["block_extras"] = std::move(b.extras);
    if (Json kept = persisted_outputs(content); !kept.empty()) meta["persisted_outputs"] = std::move(kept);
    deliver_attachments(p, content, meta);
    if (seam_.count(p) && n.role == role::kUser) end_with_newline(content);
  }
}

void Importer::wrap_summary(const Plan& pl, Json& meta) {
  Json summary = Json::object();
  summary["strategy"] = "rolling";
  summary["origin"] = "import";
  summary["format"] = kFormat;
  // The client sends its summary as written: no rolling recap is quoted after it.
  summary["recap"] = false;
  if (pl.boundary >= 0) {
    const Line& b = first_line(pl.boundary);
    Json bv = reader_->read_at(b.offset, b.length, b.part);
    Json cm = is_obj(bv, "compactMetadata") ? bv["compactMetadata"] : Json::object();
    summary["trigger"] = cm.contains("trigger") ? cm["trigger"] : Json(nullptr);
    summary["preTokens"] = cm.contains("preTokens") ? cm["preTokens"] : Json(nullptr);
    summary["postTokens"] = cm.contains("postTokens") ? cm["postTokens"] : Json(nullptr);
    if (std::vector<std::string> kept = preserved_ids(pl.boundary); !kept.empty())
      summary["preserved"] = kept;
    summary["compact_metadata"] = cm;
    summary["boundary"] = sk_.str(b.uuid);
  }
  summary["logical_parent"] = plan_id(pl.cover_last);
  for (auto it = meta.begin(); it != meta.end(); ++it) summary[it.key()] = it.value();
  meta = std::move(summary);
  meta["is_compact_summary"] = true;
}

Node Importer::build(int p) {
  const Plan& pl = plans_[p];
  const bool own_attachment = own_attachment_.count(p) > 0;
  Built b;
  Node& n = b.n;
  n.id = plan_id(p);
  n.session = sessions_[pl.session].info.id;
  n.kind = own_attachment ? kind::kEvent : kind_name(pl.kind);
  const Line& first = sk_.lines[pl.first];
  Json& meta = b.meta;
  meta["source"] = source_of(first);

  for (int li = pl.first; li >= 0; li = sk_.lines[li].next) {
    const Line& ln = sk_.lines[li];
    Json v = ln.injected ? injected_[ln.offset].record : reader_->read_at(ln.offset, ln.length, ln.part);
    if (!v.is_object()) v = Json::object();
    if (b.parts.empty()) {
      if (v.contains("timestamp")) meta["timestamp"] = v["timestamp"];
    }
    if (n.kind == kind::kEvent)
      add_event_line(li, std::move(v), b);
    else
      add_message_line(ln, std::move(v), b);
  }
  finish_message(p, own_attachment, b);
  if (pl.kind == PlanKind::summary) wrap_summary(pl, meta);

  if (pl.pred_changed || pl.kind == PlanKind::summary)
    meta["source_parent"] = first.parent == 0 ? Json(nullptr) : Json(sk_.str(first.parent));
  if (pl.missing_pred) meta["missing_predecessor"] = sk_.str(pl.missing_pred);
  if (pl.cross_session_parent) meta["cross_session_parent"] = sk_.str(pl.cross_session_parent);
  if (auto cy = cycle_.find(p); cy != cycle_.end() && !cy->second.empty()) meta["cycle"] = cy->second;
  n.content = std::move(b.content);
  n.metadata = std::move(meta);
  if (pl.pred >= 0) n.predecessor = final_id(pl.pred);
  else if (pl.stored_pred != 0) n.predecessor = stored_pred(pl);
  if (auto cv = covers_.find(p); cv != covers_.end()) {
    n.covers_ids.reserve(cv->second.size());  // no 1.5x copy while it grows
    for (int c : cv->second) n.covers_ids.push_back(final_id(c));
  }
  return std::move(b.n);
}

void Importer::write(int p) {
  Plan& pl = plans_[p];
  begin(pl.session);
  Node n = build(p);
  std::string id = n.id;
  std::string stored = sink_.add(std::move(n), sk_.lines[pl.first].line);
  if (stored != id) renamed_.emplace(p, std::move(stored));
  pl.emitted = true;
}

void Importer::emit(int start) {
  // Parents first (the store's predecessor is a foreign key), iteratively. on_stack_ is all zero
  // between calls (the plans marked are cleared at the end): one table for the import, not one
  // per call, which made pass 2 quadratic in the plans (a plans-long memset per node).
  std::vector<int> stack{start};
  std::vector<int> marked{start};
  on_stack_.resize(plans_.size(), 0);
  std::vector<char>& on_stack = on_stack_;
  on_stack[start] = 1;
  struct Clear {
    std::vector<char>& on;
    std::vector<int>& marked;
    ~Clear() {
      for (int m : marked) on[m] = 0;
    }
  } clear{on_stack, marked};
  while (!stack.empty()) {
    int p = stack.back();
    if (plans_[p].emitted) {
      stack.pop_back();
      continue;
    }
    int dep = -1;
    for (int d : {plans_[p].pred, plans_[p].cover_last})
      if (d >= 0 && !plans_[d].emitted && !on_stack[d]) {
        dep = d;
        break;
      }
    if (dep >= 0) {
      on_stack[dep] = 1;
      marked.push_back(dep);
      stack.push_back(dep);
      continue;
    }
    // A dependency still on the stack would be a cycle; break_cycles removed them all.
    if (plans_[p].pred >= 0 && !plans_[plans_[p].pred].emitted) {
      cycle_[p] = {plan_id(p), plan_id(plans_[p].pred)};
      plans_[p].pred = -1;
      plans_[p].pred_changed = true;
    }
    write(p);
    stack.pop_back();
  }
}

void Importer::run() {
  sk_ = scan(
      path_, [&](std::int64_t line, const std::string& code, const std::string& msg) { sink_.warn(line, code, msg); },
      true, sink_.resume(), sink_.max_record_bytes());
  real_lines_ = static_cast<int>(sk_.lines.size());
  reader_ = std::make_unique<JsonlReader>(
      path_, JsonlReader::Warn([](std::int64_t, const std::string&, const std::string&) {}), JsonlReader::Bad(),
      sink_.max_record_bytes());
  setup_sessions();
  plan_nodes();
  check_resumable();
  break_cycles();
  linearize_results();
  inject_worker_reminders();
  place_attachments();
  plan_compactions();
  break_cycles();
  compute_covers();
  hold_open_turn();
  // Pass 2 needs the lines (offsets, interned ids) and the plans only.
  release(sk_.by_uuid);
  release(sk_.tool_use_line);
  release(sk_.result_pool);
  release(session_of_line_);
  read_request_shapes();

  begin(0);
  const std::string& main_id = sessions_[0].info.id;
  for (const auto& [line, raw] : sk_.bad)
    if (held_line_ < 0 || line < sk_.lines[held_line_].line) sink_.keep_record(main_id, line, "unparseable", raw);
  sk_.bad.clear();

  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (held_line_ >= 0 && i >= held_line_ && !ln.injected) continue;  // read again next run
    if (ln.kind == LineKind::keep) {
      std::string raw;
      if (!ln.glued) {
        raw = raw_bytes(ln);
      } else {
        raw = dump_json(reader_->read_at(ln.offset, ln.length, ln.part));
      }
      sink_.keep_record(main_id, ln.line, sk_.str(ln.type), raw);
      continue;
    }
    if (ln.kind != LineKind::node) continue;
    int p = node_of_[i];
    if (p >= 0 && plans_[p].first == i && !held_[p]) emit(p);
  }
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p)
    if (!plans_[p].emitted && !held_[p]) emit(p);

  // HEAD: per session, the newest leaf in file order (docs/import.md "Claude Code"), of the
  // nodes written.
  std::vector<char> has_child(plans_.size(), 0);
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p)
    if (plans_[p].pred >= 0 && !held_[p]) has_child[plans_[p].pred] = 1;
  std::vector<int> best(sessions_.size(), -1);
  std::vector<int> best_line(sessions_.size(), -1);
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    const Plan& pl = plans_[p];
    if (held_[p] || has_child[p] || pl.kind == PlanKind::summary) continue;
    int last = pl.last;
    if (sk_.lines[pl.first].injected && pl.pred >= 0) last = plans_[pl.pred].last;  // file position of its record
    if (last > best_line[pl.session]) {
      best_line[pl.session] = last;
      best[pl.session] = p;
    }
  }
  for (std::size_t s = 0; s < sessions_.size(); ++s)
    if (best[s] >= 0) sink_.follow_file(sessions_[s].info.id, final_id(best[s]));
}

}  // namespace ctxfold::cc_import
