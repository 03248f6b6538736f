#pragma once
// The two client writers behind build_writeback and their shared helpers (private to lib/session).
#include <cstdint>
#include <string>

#include "render/render.hpp"
#include "session/writeback.hpp"

namespace ctxfold::writeback_detail {

/// True for 8-4-4-4-12 hex digits.
bool is_uuid(const std::string& s);
/// The first 32 hex digits of `hex` as a UUID of `version` ('4', '7') with the RFC 9562 variant.
std::string uuid_from_hex(std::string hex, char version);
/// `bytes` random bytes as hex (std::random_device).
std::string random_hex(std::size_t bytes);
/// The uuid of record `index` of session `session_id`: deterministic, so a file written twice with
/// the same --id is byte-identical.
std::string record_uuid(const std::string& session_id, std::int64_t index);
/// `now` as "YYYY-MM-DDThh:mm:ss.000Z", the timestamps both clients write.
std::string timestamp_ms(std::int64_t now);

/// Fills w.id, w.relative_path, w.lines, w.messages, w.compacted for Claude Code from the render
/// (its leading system run already removed).
void write_claude_code(const Rendered& r, const WritebackOptions& opts, Writeback& w);
/// The same for Codex.
void write_codex(const Rendered& r, const WritebackOptions& opts, Writeback& w);

}  // namespace ctxfold::writeback_detail
