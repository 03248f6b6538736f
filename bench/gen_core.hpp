#pragma once
// ctxfold-gen core: scales real Claude Code JSONL transcripts up to N nodes of the same shapes.
//
// The sources are compiled once into line templates (literal text + slots for every id,
// parent link, session id and timestamp); generation then replays them cyclically, filling the
// slots with fresh ids that are a pure function of (seed, segment, old id), so lines that shared
// an id in the source (streamed assistant lines and their message.id, tool_use and tool_result,
// progress and its toolUseID, file-history-snapshot and its user line) still share the new one.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxfold::gen {

/// What the generator writes: Claude Code session JSONL (the default), a Codex rollout, or a Gemini
/// CLI session in the JSONL form (header line, then message records).
enum class Format { claude_code, codex, gemini };

struct GenOptions {
  Format format = Format::claude_code;

  std::vector<std::string> paths;         ///< Claude Code JSONL sources (ignored with synthetic)
  std::uint64_t nodes = 1000;             ///< lines with a uuid to write (nodes of the ledger); codex/gemini: all lines
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> compact_tail;  ///< append boundary+summary leaving ~K nodes after it
  bool synthetic = false;                 ///< built-in templates instead of files
  bool cjk = false;                       ///< also replay cjk_source() (one more source file)
  /// Drop from each source line what grep never searches (thinking and redacted_thinking blocks,
  /// image blocks, the toolUseResult metadata copy of a tool result), so the history's bytes are
  /// mostly searchable text: a 500 MB text corpus without a 3.5 GB history.
  bool text_dense = false;
  /// --short N (0: off): also cut every string of a line's `message` longer than N bytes to its
  /// first N (at a UTF-8 character boundary), after text_dense's stripping, which it implies: the
  /// many-short-nodes shape (nodes of a few hundred bytes of searchable text, issue 22), where a
  /// per-node cost shows and a per-byte one does not.
  std::size_t short_text = 0;
};

struct GenStats {
  std::uint64_t nodes = 0;       ///< lines with a uuid written (boundary + summary included)
  std::uint64_t lines = 0;       ///< all lines written (snapshots, queue operations too)
  std::uint64_t bytes = 0;
  std::uint64_t cycles = 0;      ///< full or partial passes over the sources
  std::uint64_t source_lines = 0;
  std::uint64_t sidechain_nodes = 0;
  std::string session;           ///< the sessionId every line carries
  std::optional<std::uint64_t> cut_at;   ///< nodes before the compact boundary
  std::optional<std::uint64_t> tail;     ///< nodes after the summary
  std::string boundary_uuid, summary_uuid;
  std::vector<std::string> warnings;     ///< source lines that could not be used
};

/// Writes the generated JSONL through `out` (called with chunks of about 1 MiB).
/// Throws std::runtime_error on unusable input (no readable source, no place for the cut).
GenStats generate(const GenOptions& opts, const std::function<void(std::string_view)>& out);

/// Codex rollout JSONL of opts.nodes lines replayed from the rollouts in opts.paths: their first
/// session_meta (fresh session id), then their records cyclically with fresh call, turn and
/// response ids per replay; `compacted` records only with compact_tail (one, before the last K
/// lines). Throws std::runtime_error on sources without a session_meta or records.
GenStats generate_codex(const GenOptions& opts, const std::function<void(std::string_view)>& out);

/// Gemini CLI JSONL of opts.nodes lines replayed from the sessions in opts.paths (.json recordings
/// or .jsonl files): a header (fresh sessionId, kind "main"), then each message as the live
/// recording writes it (docs/formats/gemini.md): a model turn with tool calls or tokens first
/// without them and then whole under the same id, then one user message per tool result. Fresh
/// message and call ids per replay. compact_tail is refused (std::runtime_error).
GenStats generate_gemini(const GenOptions& opts, const std::function<void(std::string_view)>& out);

/// The Codex (*.jsonl) or Gemini (*.json, *.jsonl) sessions directly in dir, sorted.
std::vector<std::string> default_format_sources(const std::string& dir, Format format);

/// The built-in synthetic session (one "file" of Claude Code JSONL lines), for --synthetic.
std::vector<std::string> synthetic_source();

/// Three built-in turns in Chinese, Japanese and Korean (same shapes as synthetic_source), for
/// --cjk: benchmarks of CJK search need CJK text, which the sample transcripts do not hold.
std::vector<std::string> cjk_source();

/// All *.jsonl under dir (recursively), excluding subagents/ directories, sorted.
std::vector<std::string> default_sources(const std::string& dir);

}  // namespace ctxfold::gen
