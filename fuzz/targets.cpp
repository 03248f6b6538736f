// The fuzz targets' bodies (fuzz/README.md): each LLVMFuzzerTestOneInput in fuzz/<target>.cpp calls
// one of these, and tests/unit/fuzz/fuzz_regressions_test.cpp feeds saved inputs through the same ones.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "common.hpp"
#include "import/jsonl_reader.hpp"
#include "import/copilot.hpp"
#include "import/pi.hpp"
#include "import/qwen.hpp"
#include "session/append.hpp"
#include "session/snapshot.hpp"
#include "strategies/rolling.hpp"
#include "util/error.hpp"
#include "util/id_lines.hpp"

namespace ctxfold::fuzz {

// the claude_code importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_claude_code(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "session.jsonl", ctxfold::import_claude_code);
}

// the codex importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_codex(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "rollout.jsonl", ctxfold::import_codex);
}

// the gemini importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_gemini(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "session.json", ctxfold::import_gemini);
}

// the pi importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_pi(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "session.jsonl", ctxfold::import_pi);
}

// the qwen importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_qwen(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "chat.jsonl", ctxfold::import_qwen);
}

// the copilot importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_copilot(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "events.jsonl", ctxfold::import_copilot);
}

// the cline importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_cline(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "s.messages.json", ctxfold::import_cline);
}

// the openai_messages importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_openai_messages(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "messages.json", ctxfold::import_openai_messages);
}

// the anthropic_messages importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_anthropic_messages(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "messages.json", ctxfold::import_anthropic_messages);
}

// the openhands importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_openhands(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "trajectory.json", ctxfold::import_openhands);
}

// the ctxfold_jsonl importer (lib/import) on arbitrary bytes, then render and
// verify-invariants over what it wrote (fuzz/common.hpp).
int import_ctxfold_jsonl(const std::uint8_t* data, std::size_t size) {
  return run_importer(data, size, "nodes.jsonl", ctxfold::import_ctxfold_jsonl, writer_invariants());
}

// JsonlReader (lib/import/jsonl_reader.hpp) on arbitrary bytes: every record
// through next(), each one re-read with read_at() (the two-pass importers' path) and compared.
int jsonl_reader(const std::uint8_t* data, std::size_t size) {
  std::string path = write_input(data, size, "input.jsonl");
  std::vector<JsonlRecord> records;
  std::size_t warnings = 0, bad = 0;
  {
    JsonlReader reader(
        path, [&](std::int64_t, const std::string&, const std::string&) { ++warnings; },
        [&](std::int64_t, const std::string&) { ++bad; });
    JsonlRecord rec;
    while (reader.next(rec)) records.push_back(rec);
    for (const auto& r : records) {
      if (r.offset + r.length > size) {
        std::fprintf(stderr, "record at line %lld runs past the end of the input\n", static_cast<long long>(r.line));
        std::abort();
      }
      Json again = reader.read_at(r.offset, r.length, r.part);
      if (again != r.value) {
        std::fprintf(stderr, "read_at(line %lld part %d) differs from next()\n", static_cast<long long>(r.line), r.part);
        std::abort();
      }
    }
  }
  // The SAX path (set_parser) must see the same records.
  {
    std::size_t parsed = 0;
    JsonlReader reader(path, [](std::int64_t, const std::string&, const std::string&) {});
    reader.set_parser([&](std::string_view text) {
      bool ok = nlohmann::json::accept(text.begin(), text.end());
      if (ok) ++parsed;
      return ok;
    });
    JsonlRecord rec;
    std::size_t n = 0;
    while (reader.next(rec)) ++n;
    if (n != records.size()) {
      std::fprintf(stderr, "set_parser gave %zu records, next() %zu\n", n, records.size());
      std::abort();
    }
  }
  (void)warnings;
  (void)bad;
  return 0;
}

// format detection (`import --format auto`, lib/import/detect.cpp) on
// arbitrary bytes under a .jsonl and a .json name; the answer must be a known importer name.
int detect_format(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> known = import_formats();
  for (const char* name : {"input.jsonl", "input.json"}) {
    std::string path = write_input(data, size, name);
    try {
      std::string f = ctxfold::detect_format(path);
      if (f == "auto" || std::find(known.begin(), known.end(), f) == known.end()) {
        std::fprintf(stderr, "detect_format answered '%s', not an importer\n", f.c_str());
        std::abort();
      }
    } catch (const Error& e) {
      if (e.exit() != Exit::bad_input) throw;  // only "import.unknown_format" is expected
    }
  }
  return 0;
}

// `ctxfold append` input (JSON array or JSON Lines on stdin) through
// split_append_records and append_records (lib/session/append.hpp) into an in-memory database
// that holds one session, then verify-invariants over the touched sessions (the writer's
// invariants: the input declares its own summaries).
int stdin_append(const std::uint8_t* data, std::size_t size) {
  Store& store = memory_store();
  static bool seeded = [&] {
    Txn t(store.db());
    int k = 0;
    append_records(store,
                   split_append_records(R"({"session":"s","id":"a","role":"user","content":"hi"}
{"session":"s","id":"b","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]})"),
                   std::nullopt, [&] { return "seed-" + std::to_string(++k); });
    t.commit();
    return true;
  }();
  (void)seeded;
  Txn txn(store.db());
  std::vector<AppendRecord> records;
  try {
    records = split_append_records(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const Error&) {
    return 0;
  }
  int k = 0;
  AppendOutcome out = append_records(store, records, std::string("s"), [&] { return "gen-" + std::to_string(++k); });
  ImportResult as_import;
  for (const auto& s : out.sessions) as_import.sessions.push_back(SessionImport{s, "", "append", 0, 0, std::nullopt});
  check_store(store, as_import, writer_invariants());
  return 0;
}

// ids piped to show/expand/describe/checkout/rewind/fork with `-`
// (ids_from_lines, lib/util/id_lines.hpp).
int stdin_ids(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  auto ids = ids_from_lines(in);
  for (const auto& id : ids)
    if (id.empty()) finding("ids_from_lines gave an empty id");  // blank lines are skipped
  return 0;
}

// `render --as-of -` (and friends): a snapshot JSON on stdin through
// parse_as_of_arg (lib/session/snapshot.hpp); also the argument form with the same bytes.
int stdin_snapshot(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    SnapshotRef r = parse_as_of_arg("-", text);
    (void)r;
  } catch (const Error&) {
  }
  try {
    SnapshotRef r = parse_as_of_arg(text);
    if (r.boundary_seq < 0) finding("parse_as_of_arg gave a negative boundary");
  } catch (const Error&) {
  }
  return 0;
}

// the `compact --config FILE` JSON (docs/strategies.md "Settings") through parse_json,
// apply_rolling_config and validate_rolling_options (lib/strategies/rolling.hpp), as cmd/compact.cpp
// reads it.
int compact_config(const std::uint8_t* data, std::size_t size) {
  Json j;
  try {
    j = parse_json(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const nlohmann::json::exception&) {
    return 0;  // cmd/compact.cpp: config.invalid
  }
  RollingOptions r;
  try {
    apply_rolling_config(j, r);
    validate_rolling_options(r);
  } catch (const Error&) {
    return 0;
  }
  if (r.trigger_percent < 1 || r.trigger_percent > 100 || r.tail_percent < 1 || r.tail_percent > 100)
    finding("apply_rolling_config accepted a percentage outside 1..100");
  return 0;
}

const std::vector<std::pair<std::string, Target>>& targets() {
  static const std::vector<std::pair<std::string, Target>> all = {
      {"import_claude_code", import_claude_code},
      {"import_codex", import_codex},
      {"import_gemini", import_gemini},
      {"import_pi", import_pi},
      {"import_qwen", import_qwen},
      {"import_copilot", import_copilot},
      {"import_cline", import_cline},
      {"import_openai_messages", import_openai_messages},
      {"import_anthropic_messages", import_anthropic_messages},
      {"import_openhands", import_openhands},
      {"import_ctxfold_jsonl", import_ctxfold_jsonl},
      {"jsonl_reader", jsonl_reader},
      {"detect_format", detect_format},
      {"stdin_append", stdin_append},
      {"stdin_ids", stdin_ids},
      {"stdin_snapshot", stdin_snapshot},
      {"compact_config", compact_config},
  };
  return all;
}

}  // namespace ctxfold::fuzz
