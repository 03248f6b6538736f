#include "common.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "invariants/verify.hpp"
#include "render/render.hpp"
#include "util/error.hpp"
#include "session/open.hpp"

namespace ctxfold::fuzz {

namespace fs = std::filesystem;

namespace {
/// Made once, never freed (so it outlives every static), removed at exit.
const std::string& private_dir() {
  static const std::string* dir = [] {
    std::string base = fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string();
    std::string tmpl = base + "/ctxfold-fuzz-XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    auto* made = new std::string(tmpl);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(private_dir(), ec);
    });
    return made;
  }();
  return *dir;
}
}  // namespace

std::string write_input(const std::uint8_t* data, std::size_t size, const std::string& name) {
  std::string path = private_dir() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::abort();
  }
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

Store& memory_store() {
  static Store* store = new Store(open_store(":memory:", Store::Mode::read_write));
  return *store;
}

const std::vector<std::string>& writer_invariants() {
  static const std::vector<std::string> ids = {"I1", "I2", "I6", "I11"};
  return ids;
}

void check_store(Store& store, const ImportResult& result, const std::vector<std::string>& must_hold) {
  std::set<std::string> sessions;
  for (const auto& s : result.sessions) sessions.insert(s.session);
  for (const auto& s : sessions) {
    try {
      Rendered r = render_context(store, s, RenderOptions{});
      (void)dump_json(render_request_body(r, RenderFormat::openai));
      (void)dump_json(render_request_body(r, RenderFormat::anthropic));
      (void)render_to_text(r);
    } catch (const Error&) {
    }
  }
  VerifyReport report = verify_invariants(store, std::vector<std::string>(sessions.begin(), sessions.end()));
  bool broken = false;
  for (const auto& c : report.checks)
    if (!c.ok && (must_hold.empty() || std::find(must_hold.begin(), must_hold.end(), c.id) != must_hold.end()))
      broken = true;
  if (broken) {
    std::fprintf(stderr, "verify-invariants rejects what the importer wrote:\n%s\n",
                 verify_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    std::abort();
  }
}

int run_importer(const std::uint8_t* data, std::size_t size, const std::string& name, Importer importer,
                 const std::vector<std::string>& must_hold) {
  std::string path = write_input(data, size, name);
  Store& store = memory_store();
  Txn txn(store.db());
  ImportResult result;
  try {
    ImportSink sink(store, result, path);
    importer(path, sink);
  } catch (const Error&) {
    return 0;
  }
  check_store(store, result, must_hold);
  return 0;  // txn rolls back
}

}  // namespace ctxfold::fuzz

namespace ctxfold::fuzz {
void finding(const char* what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what);
  std::abort();
}
}  // namespace ctxfold::fuzz
