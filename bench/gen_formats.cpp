// ctxfold-gen --format codex / gemini: real Codex rollouts and Gemini CLI sessions replayed into
// one JSONL file of N lines, in the shapes today's clients write (docs/formats/codex.md,
// docs/formats/gemini.md). Every replay of a source is a segment: the ids it carries (call ids,
// turn ids, response and message ids) get fresh values that are a pure function of (seed, segment,
// old id), so a call and its output still pair up and no id repeats across replays; timestamps
// move by the sources' whole date span per replay.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <functional>
#include <optional>
#include <filesystem>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "gen_core.hpp"
#include "gen_util.hpp"

namespace ctxfold::gen {

namespace {

using OJson = nlohmann::ordered_json;
using namespace detail;

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

/// One replay's renaming: ids under the given keys get fresh values (the same old id, the same new
/// one within the segment), and every ISO timestamp under a "timestamp" key moves by `shift_days`.
class Remap {
 public:
  Remap(const std::unordered_set<std::string>& id_keys, std::uint64_t seed, std::uint64_t segment,
        std::int64_t shift_days)
      : id_keys_(id_keys), seed_(seed), segment_(segment), shift_days_(shift_days) {}

  const std::string& id(const std::string& old) {
    auto [it, fresh] = ids_.try_emplace(old);
    if (fresh) fresh_like(old, it->second, key_of(seed_, segment_, fnv1a(old)));
    return it->second;
  }

  void apply(OJson& j) {
    if (j.is_array()) {
      for (OJson& e : j) apply(e);
      return;
    }
    if (!j.is_object()) return;
    for (auto it = j.begin(); it != j.end(); ++it) {
      OJson& v = it.value();
      if (v.is_string()) {
        const std::string& key = it.key();
        if (id_keys_.count(key)) {
          v = id(v.get<std::string>());
        } else if (key == "timestamp" && shift_days_ != 0) {
          std::string s = v.get<std::string>();
          if (auto d = iso_days(s)) {
            char date[11];
            format_date(*d + shift_days_, date);
            s.replace(0, 10, date);
            v = std::move(s);
          }
        }
      } else {
        apply(v);
      }
    }
  }

 private:
  const std::unordered_set<std::string>& id_keys_;
  std::uint64_t seed_, segment_;
  std::int64_t shift_days_;
  std::unordered_map<std::string, std::string> ids_;
};

/// The whole days the sources' timestamps span (at least 1): each replay moves by this much.
std::int64_t span_days(const std::vector<OJson>& records) {
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::function<void(const OJson&)> walk = [&](const OJson& j) {
    if (j.is_array()) {
      for (const OJson& e : j) walk(e);
    } else if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "timestamp" && it.value().is_string()) {
          if (auto d = iso_days(it.value().get<std::string>())) lo = std::min(lo, *d), hi = std::max(hi, *d);
        } else {
          walk(it.value());
        }
      }
    }
  };
  for (const OJson& r : records) walk(r);
  return lo <= hi ? hi - lo + 1 : 1;
}

/// Buffers the output and counts it.
class Writer {
 public:
  Writer(const std::function<void(std::string_view)>& out, GenStats& stats) : out_(out), stats_(stats) {
    buf_.reserve((1u << 20) + (1u << 16));
  }
  void line(const OJson& j) {
    buf_ += j.dump();
    buf_ += '\n';
    ++stats_.lines;
    ++stats_.nodes;
    if (buf_.size() >= (1u << 20)) flush();
  }
  void flush() {
    if (buf_.empty()) return;
    stats_.bytes += buf_.size();
    out_(buf_);
    buf_.clear();
  }

 private:
  const std::function<void(std::string_view)>& out_;
  GenStats& stats_;
  std::string buf_;
};

OJson parse_source_line(const std::string& path, std::size_t line, const std::string& text, GenStats& stats) {
  try {
    return OJson::parse(text);
  } catch (const std::exception& e) {
    stats.warnings.push_back(path + ":" + std::to_string(line) + ": not JSON, skipped (" + e.what() + ")");
    return OJson();
  }
}

// ---------------------------------------------------------------------------------------------
// Codex rollouts.

const std::unordered_set<std::string>& codex_id_keys() {
  static const std::unordered_set<std::string> keys = {
      "id", "call_id", "turn_id", "response_id", "compaction_response_id", "first_window_id",
      "previous_window_id", "window_id"};
  return keys;
}

/// What one rollout contributes: its session_meta (the first file's opens the output), the records
/// replayed (everything but session_meta and the compaction's two records) and its compaction.
struct CodexSource {
  OJson meta;
  std::vector<OJson> body;
  OJson compacted;
};

CodexSource read_codex(const std::string& path, GenStats& stats) {
  CodexSource s;
  std::vector<std::string> lines = read_lines(path);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    OJson j = parse_source_line(path, i + 1, lines[i], stats);
    if (!j.is_object()) continue;
    ++stats.source_lines;
    const std::string type = j.value("type", "");
    const OJson* p = j.contains("payload") && j["payload"].is_object() ? &j["payload"] : nullptr;
    if (type == "session_meta") {
      if (s.meta.is_null()) s.meta = std::move(j);
    } else if (type == "compacted") {
      if (s.compacted.is_null()) s.compacted = std::move(j);
    } else if (type == "event_msg" && p && p->value("type", "") == "context_compacted") {
      continue;  // written with the compaction only
    } else {
      s.body.push_back(std::move(j));
    }
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Gemini CLI sessions.

const std::unordered_set<std::string>& gemini_id_keys() {
  static const std::unordered_set<std::string> keys = {"id"};
  return keys;
}

/// A session's header and messages: a .json recording's `messages`, or a .jsonl's message records
/// (the last version of each id, at its first place; `$set` and `$rewindTo` records are not replayed).
struct GeminiSource {
  OJson header;
  std::vector<OJson> messages;
};

GeminiSource read_gemini(const std::string& path, GenStats& stats) {
  GeminiSource s;
  if (std::filesystem::path(path).extension() == ".json") {
    std::vector<std::string> lines = read_lines(path);
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    OJson j = parse_source_line(path, 1, text, stats);
    if (!j.is_object() || !j.contains("messages") || !j["messages"].is_array()) return s;
    stats.source_lines += j["messages"].size();
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "messages" && it.key() != "summary") s.header[it.key()] = it.value();
    for (OJson& m : j["messages"])
      if (m.is_object()) s.messages.push_back(std::move(m));
    return s;
  }
  std::vector<std::string> lines = read_lines(path);
  std::unordered_map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    OJson j = parse_source_line(path, i + 1, lines[i], stats);
    if (!j.is_object()) continue;
    ++stats.source_lines;
    if (j.contains("sessionId") && !j.contains("type")) {
      if (s.header.is_null()) s.header = std::move(j);
      continue;
    }
    if (!j.contains("id") || !j["id"].is_string() || !j.contains("type")) continue;
    auto [it, first] = at.try_emplace(j["id"].get<std::string>(), s.messages.size());
    if (first) s.messages.push_back(std::move(j));
    else s.messages[it->second] = std::move(j);
  }
  return s;
}

/// The records the live recording writes for one message: a model turn that called tools or
/// reported tokens first without them (the streamed text), then whole under the same id; after
/// it, since Gemini CLI 0.61, one user message per tool result (functionResponse parts).
std::vector<OJson> gemini_records(const OJson& m, Remap& remap) {
  std::vector<OJson> out;
  OJson full = m;
  remap.apply(full);
  const bool model = full.value("type", "") == "gemini";
  const bool calls = full.contains("toolCalls") && full["toolCalls"].is_array() && !full["toolCalls"].empty();
  if (model && (calls || full.contains("tokens"))) {
    OJson streamed = full;
    streamed.erase("toolCalls");
    streamed.erase("tokens");
    out.push_back(std::move(streamed));
  }
  out.push_back(full);
  if (!model || !calls) return out;
  for (const OJson& c : full["toolCalls"]) {
    if (!c.is_object() || !c.contains("result") || !c["result"].is_array() || c["result"].empty()) continue;
    OJson r;
    const std::string call_id = c.value("id", "");
    r["id"] = fresh_uuid(fnv1a(call_id) ^ fnv1a(full.value("id", "")));
    r["timestamp"] = c.contains("timestamp") ? c["timestamp"] : full.value("timestamp", OJson());
    r["type"] = "user";
    r["content"] = c["result"];
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<std::string> default_format_sources(const std::string& dir, Format format) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext == ".jsonl" || (format == Format::gemini && ext == ".json")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

GenStats generate_codex(const GenOptions& opts, const std::function<void(std::string_view)>& out) {
  GenStats stats;
  std::vector<CodexSource> sources;
  for (const auto& p : opts.paths) sources.push_back(read_codex(p, stats));
  const CodexSource* first = nullptr;
  const OJson* compacted = nullptr;
  std::vector<OJson> all;
  for (const auto& s : sources) {
    if (!first && !s.meta.is_null()) first = &s;
    if (!compacted && !s.compacted.is_null()) compacted = &s.compacted;
    all.insert(all.end(), s.body.begin(), s.body.end());
  }
  if (!first) throw std::runtime_error("no Codex session_meta record in the sources");
  if (all.empty()) throw std::runtime_error("no Codex records to replay");
  if (opts.compact_tail && !compacted) throw std::runtime_error("--compact-tail: no compacted record in the sources");
  const std::uint64_t N = opts.nodes;
  if (opts.compact_tail && *opts.compact_tail + 2 > N) throw std::runtime_error("--compact-tail leaves no history to compact");
  const std::int64_t shift = span_days(all);

  Writer w(out, stats);
  OJson meta = first->meta;
  stats.session = fresh_uuid(key_of(opts.seed, ~0ULL, 0));
  meta["payload"]["id"] = stats.session;
  if (N > 0) w.line(meta);
  std::optional<std::uint64_t> cut;
  if (opts.compact_tail) cut = N - *opts.compact_tail - 1;
  for (std::uint64_t cycle = 0; stats.lines < N; ++cycle) {
    ++stats.cycles;
    Remap remap(codex_id_keys(), opts.seed, cycle, static_cast<std::int64_t>(cycle) * shift);
    for (const OJson& rec : all) {
      if (stats.lines >= N) break;
      if (cut && stats.lines == *cut) {
        OJson c = *compacted;
        c["timestamp"] = rec.value("timestamp", OJson());  // the record it comes before (shifted below)
        remap.apply(c);
        stats.cut_at = stats.lines;
        w.line(c);
        stats.tail = N - stats.lines;
        if (stats.lines >= N) break;
      }
      OJson j = rec;
      remap.apply(j);
      w.line(j);
    }
  }
  w.flush();
  return stats;
}

GenStats generate_gemini(const GenOptions& opts, const std::function<void(std::string_view)>& out) {
  if (opts.compact_tail) throw std::runtime_error("--compact-tail is not supported with --format gemini");
  GenStats stats;
  std::vector<GeminiSource> sources;
  for (const auto& p : opts.paths) sources.push_back(read_gemini(p, stats));
  const OJson* header = nullptr;
  std::vector<OJson> all;
  for (const auto& s : sources) {
    if (!header && s.header.is_object()) header = &s.header;
    all.insert(all.end(), s.messages.begin(), s.messages.end());
  }
  if (!header) throw std::runtime_error("no Gemini session header in the sources");
  if (all.empty()) throw std::runtime_error("no Gemini messages to replay");
  const std::int64_t shift = span_days(all);

  Writer w(out, stats);
  OJson h;
  stats.session = fresh_uuid(key_of(opts.seed, ~0ULL, 0));
  h["sessionId"] = stats.session;
  for (const char* k : {"projectHash", "startTime", "lastUpdated"})
    if (header->contains(k)) h[k] = (*header)[k];
  h["kind"] = "main";
  if (opts.nodes > 0) w.line(h);
  for (std::uint64_t cycle = 0; stats.lines < opts.nodes; ++cycle) {
    ++stats.cycles;
    Remap remap(gemini_id_keys(), opts.seed, cycle, static_cast<std::int64_t>(cycle) * shift);
    for (const OJson& m : all) {
      for (OJson& r : gemini_records(m, remap)) {
        if (stats.lines >= opts.nodes) break;
        w.line(r);
      }
      if (stats.lines >= opts.nodes) break;
    }
  }
  w.flush();
  return stats;
}

}  // namespace ctxfold::gen
