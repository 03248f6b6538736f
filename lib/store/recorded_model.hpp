#pragma once
#include <optional>
#include <string>

#include "store/store.hpp"

namespace ctxfold {

/// The model a session's transcript says it talks to now: metadata.model of its newest assistant
/// node with one (Claude Code's message.model, Gemini's record model; set by the importers; Claude
/// Code's "<synthetic>" marker of an error turn is not a model),
/// else the model of its newest Codex turn_context record (source_records, written before every
/// model request). The assistant search looks at the newest 4096 assistant nodes (a session
/// appended by a harness names no model, and is not scanned whole). Empty when
/// nothing names one. The id is the provider's as recorded, e.g. "claude-haiku-4-5-20251001"
/// (lookup_model maps a dated snapshot id to its catalog alias).
std::optional<std::string> recorded_model(Store& store, const std::string& session);

}  // namespace ctxfold
