// Claude Code importer, planning on the skeleton: merged streamed lines, predecessors, missing
// parents, cycles, parallel tool results, spliced worker reminders, compactions and coverage.

#include "import/claude_code/skeleton.hpp"

#include <bit>

namespace ctxfold::cc_import {

// An earlier line of the streamed assistant message line i continues: consecutive chain lines
// sharing message.id form one API message (docs/import.md "Claude Code"). The walk passes transparent events
// and tool results, because Claude Code runs tools while the response still streams: a
// message's later tool_use lines can hang off the result of an earlier one (seen in
// agent-aac57f5: lines 29-31 continue message fsVEw3 after result line 28).
int merge_target(const Skeleton& sk, int i) {
  const Line& ln = sk.lines[i];
  if (ln.type != sk.t_assistant || ln.msg_id == 0 || ln.conflict) return -1;
  int a = parent_line(sk, i);
  std::size_t steps = 0;
  while (a >= 0 && a < i && (sk.lines[a].event || result_only(sk, sk.lines[a])) && steps++ < sk.lines.size())
    a = parent_line(sk, a);
  if (a < 0 || a >= i) return -1;
  const Line& p = sk.lines[a];
  if (p.type == sk.t_assistant && p.msg_id == ln.msg_id && p.sidechain == ln.sidechain && !p.conflict) return a;
  return -1;
}

void Importer::plan_nodes() {
  node_of_.assign(sk_.lines.size(), -1);
  for (int i = 0; i < static_cast<int>(sk_.lines.size()); ++i) {
    const Line& ln = sk_.lines[i];
    if (ln.kind != LineKind::node) continue;
    int t = merge_target(sk_, i);
    if (t >= 0 && node_of_[t] >= 0 && session_of_line_[t] == session_of_line_[i]) {
      node_of_[i] = node_of_[t];
      Plan& into = plans_[node_of_[t]];
      sk_.lines[into.last].next = i;
      into.last = i;
      continue;
    }
    Plan p;
    p.first = p.last = i;
    p.session = session_of_line_[i];
    p.kind = ln.event ? PlanKind::event : PlanKind::message;
    node_of_[i] = static_cast<int>(plans_.size());
    plans_.push_back(std::move(p));
  }
  // Predecessors from the source links.
  for (auto& p : plans_) {
    const Line& ln = sk_.lines[p.first];
    std::uint32_t named = ln.parent;
    if (ln.boundary && named == 0) {
      // A compaction boundary restarts the chain; its logical parent keeps the raw chain whole.
      named = sk_.logical_parent_of(p.first);
      if (named != 0) p.pred_changed = true;
    }
    if (named == 0) continue;
    int named_line = sk_.line_of(named);
    if (named_line < 0 && resume_) {
      // Resumed import: a parent written before the resume point is a node of an earlier run
      // (or a line merged into one); in this session it is the predecessor.
      std::string stored = stored_node_of_uuid(sk_.str(named), sessions_[p.session].info.id);
      if (!stored.empty()) {
        const Line& first = sk_.lines[p.first];
        if (first.type == sk_.t_assistant && stored_message_id(stored) == sk_.str(first.msg_id))
          throw Error(Exit::bad_input, kResumeUnsafe, "a streamed message continues across the resume point");
        // (a merged line's uuid resolves to its node: the same predecessor a whole read gives)
        set_stored_pred(p, std::move(stored));
        continue;
      }
    }
    if (named_line < 0 && sink_.has(sk_.str(named))) {
      // A sub-agent or compaction-worker file names a record of the main file (imported first,
      // docs/import.md "Bad input, by class"): a link to another session, not a missing parent.
      p.cross_session_parent = named;
      continue;
    }
    if (named_line < 0) {
      p.missing_pred = named;
      continue;
    }
    int q = node_of_[named_line];
    if (q < 0) continue;
    if (plans_[q].session != p.session) {
      p.cross_session_parent = named;
      continue;
    }
    p.pred = q;
  }
  attach_missing_parents();
}

// A record whose parent the file never wrote (docs/import.md "Bad input, by class"). The first
// record of a session (an excerpt, a resumed file) stays a root. A record further down is
// attached to the record written just before it in the same session: Claude Code appends in
// conversation order, so that is the best witness of where it belongs, and render then still
// reaches the summary before it and everything after it. Either way metadata.missing_predecessor
// keeps the named id.
void Importer::attach_missing_parents() {
  std::vector<int> last_of_session;
  for (int i = 0; i < static_cast<int>(plans_.size()); ++i) {
    Plan& p = plans_[i];
    const std::size_t slot = static_cast<std::size_t>(p.session);
    if (last_of_session.size() <= slot) last_of_session.resize(slot + 1, -1);
    const int before = last_of_session[slot];
    last_of_session[slot] = i;
    if (!p.missing_pred) continue;
    const Line& ln = sk_.lines[p.first];
    bool reaches_self = false;  // attaching must not close a cycle through a forward link
    for (int q = before, steps = 0; q >= 0 && steps <= static_cast<int>(plans_.size()); q = plans_[q].pred, ++steps)
      if (q == i) reaches_self = true;
    if (before < 0 || reaches_self) {
      sink_.warn(ln.line, "parent.missing",
                 fmt::format("record '{}' names parent '{}', which this file never wrote; kept as a root",
                             sk_.ids.view(ln.uuid), sk_.ids.view(p.missing_pred)));
      continue;
    }
    p.pred = before;
    p.pred_changed = true;
    sink_.warn(ln.line, "parent.missing",
               fmt::format("record '{}' names parent '{}', which this file never wrote; attached to the record "
                           "written before it ('{}')",
                           sk_.ids.view(ln.uuid), sk_.ids.view(p.missing_pred), plan_id(before)));
  }
}

void Importer::break_cycles() {
  const int n = static_cast<int>(plans_.size());
  // Parent links that loop: a record rewritten under an existing uuid whose parent chain reaches
  // that uuid. By id the parent links loop (a -> b -> a); by record they do not: the rewrite is stored
  // under a new id (ImportSink::add, id.duplicate_conflict) after its parent, so it keeps the link
  // and HEAD's chain holds every record. The loop the ids would form is reported, with the line
  // of the duplicate and of the record whose id it reuses.
  for (int p = 0; p < n; ++p) {
    const Line& ln = sk_.lines[plans_[p].first];
    if (!ln.conflict || plans_[p].pred < 0 || cycle_.count(p)) continue;  // (reported by the first call)
    std::vector<std::string> ids{sk_.str(ln.uuid)};
    int q = plans_[p].pred;
    for (int steps = 0; q >= 0 && steps <= n; ++steps) {
      ids.push_back(plan_id(q));
      if (first_line(q).uuid == ln.uuid) {
        std::string joined;
        for (const auto& s : ids) joined += (joined.empty() ? "" : " -> ") + s;
        sink_.warn(ln.line, "cycle",
                   fmt::format("record '{}' reuses the id of line {} and its parent links would loop: {}; "
                               "stored under a new id after '{}', so the chain keeps every record",
                               sk_.str(ln.uuid), first_line(q).line, joined,
                               plan_id(plans_[p].pred)));
        cycle_[p] = ids;
        break;
      }
      q = plans_[q].pred;
    }
  }
  // General cycles in the predecessor function graph: break each at its earliest record.
  std::vector<std::uint8_t> state(n, 0);
  for (int s = 0; s < n; ++s) {
    if (state[s]) continue;
    std::vector<int> path;
    int v = s;
    while (v >= 0 && state[v] == 0) {
      state[v] = 1;
      path.push_back(v);
      v = plans_[v].pred;
    }
    if (v >= 0 && state[v] == 1) {
      auto start = std::find(path.begin(), path.end(), v);
      std::vector<int> cyc(start, path.end());
      int first = *std::min_element(cyc.begin(), cyc.end());
      std::vector<std::string> ids;
      for (int c : cyc) ids.push_back(plan_id(c));
      ids.push_back(plan_id(cyc.front()));
      std::string joined;
      for (const auto& id : ids) joined += (joined.empty() ? "" : " -> ") + id;
      sink_.warn(first_line(first).line, "cycle",
                 fmt::format("parent links loop: {}; '{}' kept as a root", joined, plan_id(first)));
      cycle_[first] = ids;
      plans_[first].pred = -1;
      plans_[first].pred_changed = true;
    }
    for (int k : path) state[k] = 2;
  }
}

void Importer::linearize_results() {
  // Parallel tool calls (2.1.x): every result hangs off the assistant message and the
  // conversation continues from the last one. Chain them so the spine meets each.
  // Flat tables (no node per entry, so nothing fragments the heap): step -> last result plan, and
  // the (step, tool id) pairs answered so far, open addressing over 64-bit keys (step << 32 | id,
  // plus 1 so no key is 0, the empty slot) at most half full (result_pool bounds the pairs).
  std::vector<int> last_result(plans_.size(), -1);
  std::vector<std::uint64_t> answered(std::bit_ceil(2 * sk_.result_pool.size() + 2), 0);
  auto answered_slot = [&answered](int step, std::uint32_t id) -> std::uint64_t& {
    const std::uint64_t key = ((static_cast<std::uint64_t>(step) << 32) | id) + 1;
    const std::size_t mask = answered.size() - 1;
    for (std::size_t h = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;; h = (h + 1) & mask)
      if (answered[h] == 0 || answered[h] == key) return answered[h];
  };
  std::unordered_map<std::string, int> last_stored_result;  // resumed: stored step -> last result plan
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    Plan& pl = plans_[p];
    const Line& ln = sk_.lines[pl.first];
    if (pl.kind != PlanKind::message || ln.type != sk_.t_user || sk_.n_results(ln) == 0) continue;
    if (pl.pred < 0 && pl.stored_pred != 0 && !stored_message_id(stored_pred(pl)).empty()) {
      // Resumed: the step was stored by the earlier run; continue after its stored results, then
      // after this run's.
      const std::string step = stored_pred(pl);
      auto it = last_stored_result.find(step);
      if (it != last_stored_result.end()) {
        pl.stored_pred = 0;
        pl.pred = it->second;
      } else {
        set_stored_pred(pl, stored_results_end(step));
      }
      if (stored_pred(pl) != step) pl.pred_changed = true;
      last_stored_result[step] = p;
      continue;
    }
    if (pl.pred < 0) continue;
    int step = pl.pred;
    if (first_line(step).type != sk_.t_assistant) continue;
    const std::uint32_t* ids = sk_.result_ids(ln);
    const std::uint32_t n_results = sk_.n_results(ln);
    bool again = false;
    for (std::uint32_t k = 0; k < n_results; ++k)
      if (answered_slot(step, ids[k]) != 0) again = true;
    if (again) continue;  // the same call answered on another branch: a real branch, leave it
    for (std::uint32_t k = 0; k < n_results; ++k)
      answered_slot(step, ids[k]) = ((static_cast<std::uint64_t>(step) << 32) | ids[k]) + 1;
    if (last_result[step] >= 0) {
      pl.pred = last_result[step];
      pl.pred_changed = true;
    }
    last_result[step] = p;
  }
}

// Claude Code 2.1.x sends the model <system-reminder> user messages that it does not write to the
// session file: hook output ("PostToolUse:Edit hook additional context: ...", "PreToolUse:Bash hook
// blocking error from command: ..."). An auto-compaction worker replays the conversation it
// summarises and writes them: isMeta user records whose parentUuid is the main-file record they
// followed (seen: auto_compaction_v2.1_full/fa812bfe.../subagents/agent-acompact-70d8e7.jsonl lines
// 1-13, after main lines 827-1550; the main file has none of them). They are spliced into the
// main chain after that record, as the model saw them: the record's children continue from the
// reminder. A reminder whose parent is an assistant line (a PreToolUse hook fires before the
// tool's result exists) goes after the results answering that line, so a tool_use still meets its
// result next. The reminder keeps its uuid with "~main" appended (the worker's own import keeps
// the uuid).
void Importer::inject_worker_reminders() {
  if (resume_) {
    // Resumed: reminders the earlier run spliced after a stored node ("<uuid>~main" children)
    // come before what continues from it, as in a whole read.
    for (Plan& pl : plans_) {
      if (pl.stored_pred == 0) continue;
      for (int guard = 0; guard < 10000; ++guard) {
        std::string next;
        for (const std::string& c : sink_.store().children(stored_pred(pl)))
          if (c.size() > 5 && c.compare(c.size() - 5, 5, "~main") == 0) next = c;
        if (next.empty()) break;
        set_stored_pred(pl, std::move(next));
        pl.pred_changed = true;
      }
    }
  }
  if (subagent_) return;
  std::vector<std::string> workers;
  for (const auto& f : claude_code_subagent_files(path_))
    if (fs::path(f).filename().string().rfind("agent-acompact-", 0) == 0) workers.push_back(f);
  if (workers.empty()) return;
  const fs::path dir = fs::path(path_).parent_path();
  auto result_child = [&](int at) {
    for (int r = 0; r < static_cast<int>(plans_.size()); ++r)
      if (plans_[r].pred == at && plans_[r].kind == PlanKind::message && plans_[r].session == plans_[at].session &&
          result_only(sk_, first_line(r)))
        return r;
    return -1;
  };
  std::unordered_map<int, int> tail;  // splice point -> the last reminder spliced after it
  for (const auto& w : workers) {
    // Read with the record limit like every other file: the worker's own import reports its
    // bad lines, so this second read warns about nothing.
    JsonlReader in(w, {}, {}, sink_.max_record_bytes());
    JsonlRecord rec;
    while (in.next(rec)) {
      const std::int64_t lineno = rec.line;
      Json& v = rec.value;
      if (!v.is_object() || str_at(v, "type") != "user") continue;
      auto meta = v.find("isMeta");
      if (meta == v.end() || !meta->is_boolean() || !meta->get<bool>()) continue;
      if (!is_obj(v, "message")) continue;
      auto c = v["message"].find("content");
      if (c == v["message"].end() || !(c->is_string() || c->is_array())) continue;
      const std::string uuid = str_at(v, "uuid"), parent = str_at(v, "parentUuid");
      if (uuid.empty() || parent.empty() || sk_.line_of(sk_.ids.intern(uuid)) >= 0) continue;
      const int pline = sk_.line_of(sk_.ids.intern(parent));
      if (pline < 0 || node_of_[pline] < 0) continue;
      int q = node_of_[pline];
      if (plans_[q].kind != PlanKind::message) continue;
      if (first_line(q).type == sk_.t_assistant) {
        if (c->is_string() && c->get_ref<const std::string&>().find(" hook blocking error from command: ") !=
                                  std::string::npos) {
          // The blocking error of this message's tool call is recorded: no estimate for it.
          std::unordered_set<int> lines;
          for (int li = plans_[q].first; li >= 0; li = sk_.lines[li].next) lines.insert(li);
          for (std::uint32_t id = 1; id < sk_.tool_use_line.size(); ++id)
            if (lines.count(sk_.tool_use_line[id])) block_recorded_.insert(id);
        }
        for (int r = result_child(q); r >= 0; r = result_child(q)) q = r;
      }
      for (auto t = tail.find(q); t != tail.end(); t = tail.find(q)) q = t->second;
      Line ln;
      ln.line = lineno;
      ln.kind = LineKind::node;
      ln.type = sk_.t_user;
      ln.injected = true;
      ln.offset = injected_.size();
      ln.uuid = sk_.ids.intern(uuid + "~main");
      ln.parent = sk_.ids.intern(parent);
      const int np = static_cast<int>(plans_.size());
      for (auto& other : plans_)
        if (other.pred == q && other.session == plans_[q].session) {
          other.pred = np;
          other.pred_changed = true;
        }
      Plan pl;
      pl.first = pl.last = static_cast<std::int32_t>(sk_.lines.size());
      pl.session = plans_[q].session;
      pl.pred = q;
      pl.pred_changed = true;
      plans_.push_back(pl);
      sk_.lines.push_back(ln);
      node_of_.push_back(np);
      session_of_line_.push_back(pl.session);
      injected_.push_back(Injected{std::move(v), fs::path(w).lexically_relative(dir).generic_string(), lineno});
      tail[q] = np;
    }
  }
}

// Claude Code 2.1.x writes what it adds to the model's input beside the conversation as
// attachment records (environment, date, reminders, queued prompts...) whose "rendered" array is
// the text it sends and "renderedRole" how ("system": a <system-reminder> it folds into the user
// turn, "user": a user text block). The client sends them where they land after its own
// reordering (docs/formats/claude-code.md "Attachments"): attachments that follow a user prompt
// go before that prompt's text in the same user turn; "system" attachments that follow a tool
// result are appended to that result's text; others that follow a tool result are a text block
// beside it; anything else (after an assistant message or a summary, or after a node a resumed
// import stored earlier) is a user message of its own.
void Importer::place_attachments() {
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    Plan& pl = plans_[p];
    const Line& ln = first_line(p);
    if (pl.kind != PlanKind::event || !ln.rendered) continue;
    if (ln.rendered_unknown)
      sink_.warn(ln.line, "attachment.role_unknown",
                 fmt::format("attachment '{}' has a renderedRole this importer does not know; its text is kept "
                             "as user text where it was written",
                             sk_.ids.view(ln.uuid)));
    // Walk up over events and the run of user text records before it (the client bubbles an
    // attachment above them); stop at an assistant message, a tool result, a compaction boundary
    // or a summary followed by preserved messages.
    int q = pl.pred;
    int host = -1;
    Placement at = Placement::before;
    for (std::size_t steps = 0; q >= 0 && steps <= plans_.size(); ++steps, q = plans_[q].pred) {
      const Plan& c = plans_[q];
      const Line& h = first_line(q);
      if (own_attachment_.count(q)) break;
      if (c.kind == PlanKind::event) {
        if (h.boundary) break;
        continue;
      }
      if (c.kind != PlanKind::message || h.type != sk_.t_user || h.injected) break;
      if (result_only(sk_, h)) {
        if (host < 0) {
          host = q;
          at = ln.rendered_user || ln.rendered_beside ? Placement::beside : Placement::into_result;
        }
        break;
      }
      if (h.compact_summary && summary_preserves(q)) break;
      host = q;
    }
    if (ln.rendered_unknown) host = -1;
    if (host < 0) {
      own_attachment_.insert(p);
      pl.kind = PlanKind::message;
      continue;
    }
    delivered_[host].push_back(Delivered{p, at});
    host_of_[p] = host;
  }
  // Consecutive user records the client sends as one user turn: it ends the earlier one's text
  // with a newline where the later record's text joins it.
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    const Line& y = first_line(p);
    if (plans_[p].kind != PlanKind::message || own_attachment_.count(p) || y.type != sk_.t_user ||
        result_only(sk_, y) || y.injected)
      continue;
    int q = plans_[p].pred;
    for (std::size_t steps = 0; q >= 0 && steps <= plans_.size() && plans_[q].kind == PlanKind::event &&
                                !first_line(q).boundary && !own_attachment_.count(q);
         ++steps)
      q = plans_[q].pred;
    if (q < 0 || plans_[q].kind != PlanKind::message) continue;
    const Line& x = first_line(q);
    if (own_attachment_.count(q) || (x.type == sk_.t_user && !result_only(sk_, x) && !x.injected &&
                                     !(x.compact_summary && summary_preserves(q))))
      seam_.insert(q);
  }
}

const Json& Importer::boundary_metadata(int boundary) {
  auto it = compact_meta_.find(boundary);
  if (it != compact_meta_.end()) return it->second;
  const Line& b = first_line(boundary);
  Json v = reader_->read_at(b.offset, b.length, b.part);
  Json cm = is_obj(v, "compactMetadata") ? v["compactMetadata"] : Json::object();
  return compact_meta_.emplace(boundary, std::move(cm)).first->second;
}

int Importer::boundary_of(int summary) {
  int q = plans_[summary].pred;
  // Attachment records may stand between the boundary and its summary.
  for (std::size_t steps = 0; q >= 0 && steps <= plans_.size(); ++steps, q = plans_[q].pred) {
    if (first_line(q).boundary) return q;
    if (plans_[q].kind != PlanKind::event) return -1;
  }
  return -1;
}

std::vector<std::string> Importer::preserved_ids(int boundary) {
  std::vector<std::string> out;
  const Json& cm = boundary_metadata(boundary);
  if (is_obj(cm, "preservedMessages")) {
    const Json& pm = cm["preservedMessages"];
    const char* key = pm.contains("allUuids") ? "allUuids" : "uuids";
    if (auto u = pm.find(key); u != pm.end() && u->is_array())
      for (const auto& x : *u)
        if (x.is_string()) out.push_back(x.get<std::string>());
  }
  if (out.empty() && is_obj(cm, "preservedSegment")) {
    const std::string head = str_at(cm["preservedSegment"], "headUuid");
    const std::string tail = str_at(cm["preservedSegment"], "tailUuid");
    if (!head.empty()) out.push_back(head);
    if (!tail.empty() && tail != head) out.push_back(tail);
  }
  return out;
}

bool Importer::summary_preserves(int summary) {
  int b = boundary_of(summary);
  if (b < 0) return false;
  for (const std::string& id : preserved_ids(b))
    if (sk_.line_of(sk_.ids.intern(id)) >= 0) return true;
  return false;
}

void Importer::plan_compactions() {
  for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
    Plan& pl = plans_[p];
    const Line& ln = sk_.lines[pl.first];
    if (!ln.compact_summary || pl.kind != PlanKind::message) continue;
    int anchor = -1;
    int last = -1;
    int q = pl.pred;
    if (int b = boundary_of(p); b >= 0) q = b;
    if (q >= 0 && first_line(q).boundary) {
      if (plans_[q].pred >= 0) {
        anchor = q;
        last = plans_[q].pred;
      }
    } else if (q >= 0) {
      anchor = q;
      last = q;
    }
    if (last < 0) {
      // A boundary whose logicalParentUuid is null starts the session with its summary (a session
      // `export --format claude-code` wrote, docs/formats/writeback.md): a message, nothing lost.
      if (q >= 0 && first_line(q).boundary && sk_.logical_parent_of(plans_[q].first) == 0) continue;
      sink_.warn(ln.line, "summary.uncovered",
                 fmt::format("compact summary '{}' has no logical parent in this file; kept as a message",
                             sk_.ids.view(ln.uuid)));
      continue;
    }
    pl.kind = PlanKind::summary;
    pl.boundary = first_line(q).boundary ? q : -1;
    pl.cover_last = last;
    for (auto& other : plans_)
      if (other.pred == p) {
        other.pred = anchor;
        other.pred_changed = true;
      }
  }
}

void Importer::compute_covers() {
  const int n = static_cast<int>(plans_.size());
  for (int p = 0; p < n; ++p) {
    Plan& pl = plans_[p];
    if (pl.kind != PlanKind::summary) continue;
    std::vector<int> chain;
    int q = pl.cover_last;
    for (int steps = 0; q >= 0 && steps <= n; ++steps) {
      if (plans_[q].kind == PlanKind::summary) break;  // never cover a summary id
      chain.push_back(q);
      q = plans_[q].pred;
    }
    std::reverse(chain.begin(), chain.end());
    if (pl.boundary >= 0) {
      // Messages the client kept verbatim after the summary (compactMetadata.preservedSegment /
      // preservedMessages): the summary does not cover them; they render after it.
      const std::vector<std::string> keep = preserved_ids(pl.boundary);
      if (!keep.empty()) {
        std::size_t cut = chain.size();
        for (const std::string& id : keep) {
          int line = sk_.line_of(sk_.ids.intern(id));
          int kp = line >= 0 ? node_of_[line] : -1;
          auto pos = kp >= 0 ? std::find(chain.begin(), chain.end(), kp) : chain.end();
          if (pos == chain.end()) {
            sink_.warn(first_line(pl.boundary).line, "summary.preserved_unknown",
                       fmt::format("compaction boundary '{}' preserves '{}', which is not on the chain it "
                                   "summarizes; the summary covers it",
                                   plan_id(pl.boundary), id));
            continue;
          }
          cut = std::min(cut, static_cast<std::size_t>(pos - chain.begin()));
        }
        // Everything from the first preserved message on stays raw (the preserved run is the tail).
        chain.resize(cut);
      }
    }
    pl.pred = chain.empty() ? -1 : plans_[chain.front()].pred;
    if (chain.empty()) {
      covers_.erase(p);
      pl.kind = PlanKind::message;
      sink_.warn(sk_.lines[pl.first].line, "summary.uncovered",
                 fmt::format("compact summary '{}' covers nothing; kept as a message", plan_id(p)));
    } else {
      covers_[p] = std::move(chain);
    }
  }
}

// Read while it is written (docs/formats/claude-code.md "Read while it is written"). A node's
// content may depend on lines after it: streamed lines of one assistant message merge into one
// node, attachments after a user prompt or a tool result fold into it, a user record followed by
// another ends its text with a newline (seam_). Everything before the last assistant message's
// first line is settled: what Claude Code appends next hangs off that message or later records,
// and every such look-back stops at an assistant message. A turn_duration / stop_hook_summary
// record right after an assistant message (only unrendered events between) ends the turn: then
// everything up to it is settled; so is everything before a compaction boundary. When the reply
// is known to be complete (ImportSink::reply_done), the last assistant message is settled too.
// The rest is the open turn.
int Importer::open_turn_start() const {
  for (int i = real_lines_ - 1; i >= 0; --i) {
    const Line& ln = sk_.lines[i];
    if (ln.turn_end) {
      int j = i - 1;
      while (j >= 0 && (sk_.lines[j].kind != LineKind::node || (sk_.lines[j].event && !sk_.lines[j].rendered))) --j;
      if (j >= 0 && sk_.lines[j].type == sk_.t_assistant && sk_.lines[j].kind == LineKind::node) return i + 1;
      continue;
    }
    if (ln.boundary) return i;  // every look-back stops at a compaction boundary
    if (ln.kind == LineKind::node && ln.type == sk_.t_assistant && node_of_[i] >= 0) {
      if (sink_.reply_done()) return i + 1;  // the reply is complete: what follows it is open
      // with the records written just before the reply (its request's shape and id: kept, not nodes)
      int first = plans_[node_of_[i]].first;
      while (first > 0 && sk_.lines[first - 1].kind != LineKind::node) --first;
      return first;
    }
  }
  return 0;  // no assistant message yet: all of it is one open turn
}

void Importer::hold_open_turn() {
  held_.assign(plans_.size(), 0);
  if (!sink_.hold_open_turn()) return;
  int hold = open_turn_start();
  // A plan with lines on both sides of the cut is held whole (a message merged across it).
  for (bool moved = true; moved && hold < real_lines_;) {
    moved = false;
    for (const Plan& pl : plans_)
      if (!sk_.lines[pl.first].injected && pl.first < hold && pl.last >= hold) {
        hold = pl.first;
        moved = true;
      }
  }
  if (hold >= real_lines_) return;
  held_line_ = hold;
  // Held: plans read from the cut on, and whatever hangs off or summarizes a held plan.
  for (bool grew = true; grew;) {
    grew = false;
    for (int p = 0; p < static_cast<int>(plans_.size()); ++p) {
      if (held_[p]) continue;
      const Plan& pl = plans_[p];
      const bool own = !first_line(p).injected && pl.first >= hold;
      if (own || (pl.pred >= 0 && held_[pl.pred]) || (pl.cover_last >= 0 && held_[pl.cover_last])) {
        held_[p] = 1;
        grew = true;
      }
    }
  }
  const Line& cut = sk_.lines[hold];
  sink_.hold_from(ResumePoint{cut.offset, cut.line - 1});
}

}  // namespace ctxfold::cc_import
