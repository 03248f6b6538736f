#pragma once
// Shared by the libFuzzer targets in fuzz/ (fuzz/README.md). Not part of the library.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "import/import.hpp"
#include "store/store.hpp"

namespace ctxfold::fuzz {

/// Writes the input to a file named `name` in this process's private temporary directory
/// (under /dev/shm when it exists) and returns its path. The same path is reused per name.
std::string write_input(const std::uint8_t* data, std::size_t size, const std::string& name);

/// One in-memory ctxfold database per process, migrated once. Each input runs in a write
/// transaction that is rolled back, so inputs do not see each other's nodes.
Store& memory_store();

/// Oracle after an import: renders every imported session (openai, anthropic, text) and runs
/// verify-invariants over them; a violation of one of `must_hold` (all invariants when empty)
/// prints the report and aborts (a writer stored a database that its own checker rejects). Error
/// exceptions from render are expected (e.g. a session with no HEAD); anything else propagates
/// and crashes the run.
void check_store(Store& store, const ImportResult& result, const std::vector<std::string>& must_hold = {});

/// What a writer that stores caller-declared nodes guarantees whatever the input (ctxfold JSONL
/// import, `append`): I1 ledger, I2 DAG, I6 HEAD, I11 SQLite. A summary declared in the input may
/// break the compaction invariants (I3, I4, I7) and so the render ones (I5, I10): reporting that
/// is verify-invariants' job in CI, not a writer bug.
const std::vector<std::string>& writer_invariants();

using Importer = void (*)(const std::string&, ImportSink&);

/// The body of every importer target: input → file `name` → importer (inside a rolled-back
/// transaction) → check_store. Error exceptions are the importer's documented failures (the file
/// could not be read); any other exception is a finding.
int run_importer(const std::uint8_t* data, std::size_t size, const std::string& name, Importer importer,
                 const std::vector<std::string>& must_hold = {});

}  // namespace ctxfold::fuzz

namespace ctxfold::fuzz {

/// A fuzz target's body: one input, returns 0 (libFuzzer's convention); a finding aborts.
using Target = int (*)(const std::uint8_t* data, std::size_t size);

/// Every target by name (the fuzz/<name>.cpp entry points and fuzz/seeds/<name>/).
const std::vector<std::pair<std::string, Target>>& targets();

int import_claude_code(const std::uint8_t* data, std::size_t size);
int import_codex(const std::uint8_t* data, std::size_t size);
int import_gemini(const std::uint8_t* data, std::size_t size);
int import_pi(const std::uint8_t* data, std::size_t size);
int import_qwen(const std::uint8_t* data, std::size_t size);
int import_copilot(const std::uint8_t* data, std::size_t size);
int import_cline(const std::uint8_t* data, std::size_t size);
int import_openai_messages(const std::uint8_t* data, std::size_t size);
int import_anthropic_messages(const std::uint8_t* data, std::size_t size);
int import_openhands(const std::uint8_t* data, std::size_t size);
int import_ctxfold_jsonl(const std::uint8_t* data, std::size_t size);
int jsonl_reader(const std::uint8_t* data, std::size_t size);
int detect_format(const std::uint8_t* data, std::size_t size);
int stdin_append(const std::uint8_t* data, std::size_t size);
int stdin_ids(const std::uint8_t* data, std::size_t size);
int stdin_snapshot(const std::uint8_t* data, std::size_t size);
int compact_config(const std::uint8_t* data, std::size_t size);

}  // namespace ctxfold::fuzz

namespace ctxfold::fuzz {
/// Reports a broken property on stderr and aborts (what libFuzzer records as a crash).
[[noreturn]] void finding(const char* what);
}  // namespace ctxfold::fuzz
