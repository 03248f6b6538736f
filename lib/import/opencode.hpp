// opencode and Kilo CLI session stores (docs/formats/opencode.md).
#pragma once

#include <optional>
#include <string>

#include "import/import.hpp"

namespace ctxfold {

/// The agent whose SQLite session store the file at `path` is, told by its content
/// (docs/formats/opencode.md "Telling the stores apart"): "kilo" when its `migration` table names a
/// Kilo migration, "opencode" when it holds opencode's tables (`session`, `message`, `part`,
/// `migration`) only; nullopt for any other file (not SQLite, or another schema). Throws
/// Error(bad_input, "import.unknown_version") for an opencode or Kilo store migrated past the newest
/// migration this importer was checked against (it names both), never guessing.
std::optional<std::string> opencode_store_format(const std::string& path);

/// Imports an opencode (`~/.local/share/opencode/opencode.db`) or Kilo CLI
/// (`~/.local/share/kilo/kilo.db`) store, opened read-only (the agent's files are never written):
/// every row of `session` becomes a session (a child session, `parent_id` set, a sidechain of its
/// parent launched from the task call that names it), each `message` row with its `part` rows one
/// or more nodes (a tool part: the call in the assistant node and its result in a tool node after
/// it; tokens as metadata.usage), a user message with a `compaction` part and the `summary: true`
/// assistant message answering it one summary view node covering the chain before them. A part
/// type no node holds is kept as a source record ("part/TYPE", line = its rowid). Warnings name the
/// table and rowid. Error(bad_input, "import.unknown_version") for an unknown schema (see
/// opencode_store_format); Error(environment) when the file cannot be opened.
void import_opencode(const std::string& path, ImportSink& sink);
/// The same for a Kilo CLI store (format name "kilo").
void import_kilo(const std::string& path, ImportSink& sink);

}  // namespace ctxfold
