#include "session/writeback.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "model/node.hpp"
#include "render/view_policy.hpp"
#include "session/writeback_detail.hpp"
#include "store/recorded_model.hpp"
#include "util/digest.hpp"
#include "util/environment.hpp"
#include "util/error.hpp"

namespace ctxfold {

std::optional<WritebackClient> parse_writeback_client(const std::string& s) {
  if (s == "claude-code") return WritebackClient::claude_code;
  if (s == "codex") return WritebackClient::codex;
  return std::nullopt;
}

namespace writeback_detail {

bool is_uuid(const std::string& s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::string uuid_from_hex(std::string hex, char version) {
  hex.resize(32, '0');
  hex[12] = version;
  hex[16] = "89ab"[std::stoi(hex.substr(16, 1), nullptr, 16) & 3];
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4),
                     hex.substr(20, 12));
}

std::string random_hex(std::size_t bytes) {
  std::random_device rd;
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) out += fmt::format("{:02x}", rd() & 0xff);
  return out;
}

std::string record_uuid(const std::string& session_id, std::int64_t index) {
  return uuid_from_hex(sha256_hex(fmt::format("{}:{}", session_id, index)), '4');
}

std::string timestamp_ms(std::int64_t now) {
  std::string s = rfc3339_utc(now);  // "YYYY-MM-DDThh:mm:ssZ"
  if (!s.empty() && s.back() == 'Z') s.insert(s.size() - 1, ".000");
  return s;
}

}  // namespace writeback_detail

using namespace writeback_detail;

std::string claude_project_slug(const std::string& cwd) {
  std::string out = cwd;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return out;
}

std::string writeback_cwd(Store& st, const std::string& session) {
  if (auto s = st.session(session); s && s->metadata.is_object()) {
    if (std::string c = json_str(s->metadata, "cwd"); !c.empty()) return c;
  }
  std::string found;
  std::int64_t looked = 0;
  st.for_each_node(session, [&](const Node& n) {
    const Json& parts = n.metadata.is_object() && n.metadata.contains("source") ? n.metadata["source"] : Json();
    if (parts.is_object() && parts.contains("parts") && parts["parts"].is_array())
      for (const auto& p : parts["parts"])
        if (p.is_object() && p.contains("record") && p["record"].is_object())
          if (std::string c = json_str(p["record"], "cwd"); !c.empty()) found = c;
    return found.empty() && ++looked < 64;  // the first records say it, when any does
  });
  if (!found.empty()) return found;
  st.for_each_source_record(session, "session_meta", [&](const Store::SourceRecord& r) {
    try {
      Json j = parse_json(r.raw);
      if (j.contains("payload") && j["payload"].is_object()) found = json_str(j["payload"], "cwd");
    } catch (const std::exception&) {
    }
    return found.empty();
  });
  return found;
}

void write_new_file(const std::string& path, const std::vector<std::string>& lines) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec)
    throw Error(Exit::environment, "io.write",
                fmt::format("cannot create the folder '{}': {}", p.parent_path().string(), ec.message()));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST)
    throw Error(Exit::environment, "export.exists", fmt::format("'{}' already exists; nothing was written", path),
                "export never overwrites a session file: pass another --id, or remove the file yourself");
  if (fd < 0) throw Error(Exit::environment, "io.write", fmt::format("cannot create '{}': {}", path, std::strerror(errno)));
  std::string buf;
  for (const auto& l : lines) (buf += l) += '\n';
  std::size_t done = 0;
  while (done < buf.size()) {
    ssize_t w = ::write(fd, buf.data() + done, buf.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      fs::remove(p, ec);
      throw Error(Exit::environment, "io.write", fmt::format("cannot write '{}': {}", path, why));
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    fs::remove(p, ec);
    throw Error(Exit::environment, "io.write", fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  }
}

namespace {

/// The render the client is to continue: rows whole, the leading system run left out.
Rendered render_for_client(Store& st, const std::string& session, const WritebackOptions& opts) {
  RenderOptions ro = opts.render;
  ro.max_row_bytes = 0;
  // snapcompact's frames are laid out for the model the transcript names last, as `render` does
  if (const ViewPolicy* v = find_view_policy(ro.strategy); v && v->frames && ro.model.empty())
    ro.model = recorded_model(st, session).value_or("");
  Rendered r = render_context(st, session, ro);
  std::size_t lead = 0;
  while (lead < r.messages.size() && r.messages[lead].role == role::kSystem) ++lead;
  r.messages.erase(r.messages.begin(), r.messages.begin() + static_cast<std::ptrdiff_t>(lead));
  if (r.messages.empty())
    throw Error(Exit::bad_input, "export.empty",
                fmt::format("session '{}' renders no message from {} to write", session, r.head),
                "a client resumes a conversation: the session needs at least one user or assistant message");
  return r;
}

Json provenance_of(const Rendered& r, std::int64_t now) {
  Json folds = Json::array();
  for (const auto& f : r.folds) folds.push_back(f.id);
  return Json{{"tool", "ctxfold"},
              {"source_session", r.session},
              {"source_head", r.head},
              {"strategy", r.strategy},
              {"summary", r.summary ? Json(*r.summary) : Json(nullptr)},
              {"folds", folds},
              {"archive", r.archive ? Json(*r.archive) : Json(nullptr)},
              {"exported_at", rfc3339_utc(now)}};
}

}  // namespace

Writeback build_writeback(Store& st, const std::string& session, const WritebackOptions& opts) {
  if (!opts.id.empty() && !is_uuid(opts.id))
    throw Error(Exit::usage, "export.id", fmt::format("--id '{}' is not a UUID (8-4-4-4-12 hex digits)", opts.id),
                "Claude Code and Codex name session files by a UUID");
  Rendered r = render_for_client(st, session, opts);
  Writeback w;
  w.cwd = !opts.cwd.empty() ? opts.cwd : writeback_cwd(st, session);
  if (w.cwd.empty()) w.cwd = opts.fallback_cwd;
  w.provenance = provenance_of(r, opts.now);
  w.estimated_tokens = r.estimated_tokens;
  w.compacted = r.summary.has_value() || !r.folds.empty() || r.archive.has_value();
  if (opts.client == WritebackClient::codex)
    write_codex(r, opts, w);
  else
    write_claude_code(r, opts, w);
  return w;
}

}  // namespace ctxfold
