#pragma once
// Helpers shared by the document-shaped importers (codex, gemini, openai, anthropic, openhands,
// ctxfold JSONL). Internal to lib/import: nothing outside the importers should include this.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "import/import.hpp"
#include "import/jsonl_reader.hpp"
#include "util/json.hpp"

namespace ctxfold::import_detail {

/// The whole file as bytes. Throws Error(environment,"io.open") when it cannot be read.
std::string read_file_bytes(const std::string& path);

/// The file name without directory and without a trailing ".jsonl", ".json" or ".traj.json":
/// the session id of formats whose documents carry no usable one.
std::string file_stem(const std::string& path);

/// The file name without directory: what metadata.source.file records, so importing the same
/// file through another path spelling stores identical nodes (re-import adds nothing).
std::string file_name(const std::string& path);

/// 1-based line of byte offset `byte` in text (offsets past the end give the last line).
std::int64_t line_of_offset(std::string_view text, std::size_t byte);

/// Deepest container nesting in a JSON text (strings and escapes honoured). Used to refuse
/// documents nested deeper than JsonlReader::kMaxDepth before handing them to the parser.
int json_max_depth(std::string_view text);

/// True, with a "document.too_large" warning at line 1, when the file at path is longer than the
/// record limit (ImportSink::max_record_bytes): a whole-document format is one record, so such a
/// file is not read at all (no session is begun). False when it fits or cannot be stat'ed (the
/// read then reports why).
bool document_too_large(const std::string& path, ImportSink& sink);

/// A parsed JSON document plus where its items start.
struct Document {
  Json value;
  std::string text;  ///< the (UTF-8 sanitised) bytes that were parsed
  bool duplicate_key = false;  ///< an object has a key twice ("json.duplicate_key"): keep text verbatim
};

/// Reads and parses path as one JSON document. Invalid UTF-8 is replaced by U+FFFD (warning
/// "utf8.invalid"); a malformed or too deep document gives a warning ("document.malformed",
/// "document.too_deep") with the 1-based line of the parser's error position and nullopt.
/// Throws Error(environment,"io.open") only when the file cannot be read.
std::optional<Document> parse_document(const std::string& path, ImportSink& sink);

/// 1-based lines where the elements of the "item array" start: the root array when the document
/// is an array, else the array held by the root object's member `key`. Empty when neither exists.
std::vector<std::int64_t> element_lines(std::string_view text, const std::string& key);

/// Line for item i from element_lines output (0 when unknown).
inline std::int64_t line_at(const std::vector<std::int64_t>& lines, std::size_t i) {
  return i < lines.size() ? lines[i] : 0;
}

/// metadata.source: {"format","file","line"?,"index"?}; line/index omitted when negative/zero.
Json source_meta(const std::string& format, const std::string& file, std::int64_t line, std::int64_t index = -1);

/// {"type":"text","text":s}
Json text_block(const std::string& s);

/// {"type":"opaque","provider":p,"data":d}
Json opaque_block(const std::string& provider, const Json& data);

/// An image block from a URL: a base64 data URL ("data:image/png;base64,...") becomes
/// {"type":"image","media_type","data"}; anything else {"type":"image","ref":url}.
Json image_from_url(const std::string& url);

/// Tool arguments held as a JSON string (OpenAI function calls, Codex, OpenHands): the parsed
/// value when it parses to an object, else {"raw": s}. *parsed tells which.
Json parse_arguments(const std::string& s, bool* parsed = nullptr);

/// A whole-document source whose items are the root array or the array under root[key].
struct ItemDocument {
  Document doc;
  std::string session;  ///< the file stem (sessions are keyed by file)
  std::string file;     ///< the file name recorded in metadata.source
  std::vector<std::int64_t> lines;  ///< 1-based line where each item starts
  std::string key;      ///< empty when the items are the root array
  const Json& items() const { return key.empty() ? doc.value : doc.value.at(key); }
};

/// The common opening of the OpenAI, Anthropic and OpenHands importers: names the session after
/// the file stem and begins it (format, source path, the root object's other keys as metadata
/// except those in `known`). A malformed document, or one without the item array, is kept whole
/// as a source record (warning "document.unexpected" naming `what`) and gives nullopt.
std::optional<ItemDocument> open_item_document(const std::string& path, ImportSink& sink, const std::string& format,
                                               const std::string& key, std::initializer_list<const char*> known,
                                               const std::string& what);

/// One Anthropic Messages content block → neutral block (text, image, tool_use, tool_result with
/// its content converted, thinking; anything else opaque{provider:"anthropic"}); extras receives
/// the block's keys the neutral form has no place for. Defined in anthropic_messages.cpp.
Json anthropic_block(const Json& b, Json& extras);

/// Copies every member of obj whose key is not in known into a new object (the non-API keys
/// kept in node metadata so nothing is dropped).
Json extra_keys(const Json& obj, std::initializer_list<const char*> known);

/// The unreadable lines of a JSON Lines transcript whose session is named by one of its records
/// (docs/import.md "What every import guarantees": nothing is dropped): each becomes a "line.bad"
/// source record of the session; those read before the session began wait for begin().
class BadLines {
 public:
  explicit BadLines(ImportSink& sink) : sink_(sink) {}
  /// The JsonlReader callbacks: warnings to the sink, bad lines kept or held.
  JsonlReader::Warn warn();
  JsonlReader::Bad keep();
  /// The session began: keeps the lines held so far, and each later one as it comes.
  void begin(const std::string& session);
  /// True when lines were held and no session began (a file of bad lines only).
  bool holding() const { return !held_.empty(); }

 private:
  ImportSink& sink_;
  std::string session_;
  std::vector<std::pair<std::int64_t, std::string>> held_;
};

}  // namespace ctxfold::import_detail
