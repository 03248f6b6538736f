#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ctxfold {

/// All JSON in ctxfold is insertion-ordered, so stored content keeps the source's key order and
/// the same state always serializes to the same bytes.
using Json = nlohmann::ordered_json;

/// Serializes compactly; invalid UTF-8 inside strings is replaced by U+FFFD instead of throwing.
/// The bytes are those of nlohmann's `j.dump(-1, ' ', false, error_handler_t::replace)` (stored
/// content and digests depend on them; lib/util/json.cpp says how they are kept equal).
std::string dump_json(const Json& j);

/// Where dump_json_to writes: append(p, n) receives the serialized text in pieces, in order.
class JsonSink {
 public:
  virtual ~JsonSink() = default;
  virtual void append(const char* p, std::size_t n) = 0;
};

/// Writes dump_json(j) to sink in pieces without holding it whole (for digests of large
/// documents, util/json_digest.hpp).
void dump_json_to(const Json& j, JsonSink& sink);

/// Appends dump_json(Json(s)) to out without making the Json value: s quoted and escaped, invalid
/// UTF-8 replaced by U+FFFD (canonical_node writes a node's ids this way for every digest).
void append_json_string(std::string& out, const std::string& s);

/// Parses text as JSON. Throws nlohmann::json::parse_error on malformed input.
Json parse_json(std::string_view text);

/// Rewrites every JSON `\uXXXX` escape of a lone UTF-16 surrogate (U+D800..U+DFFF not part of a
/// high+low pair) in `text` to `\uFFFD`, so nlohmann::json, which refuses them, can parse what
/// JavaScript's JSON.stringify writes for a string cut inside a surrogate pair. Escaped
/// backslashes (`\\uD800` is text, not an escape) and valid pairs are left alone. Returns how
/// many escapes were rewritten; `out` holds the rewritten text (a copy of `text` when 0).
std::size_t replace_lone_surrogate_escapes(std::string_view text, std::string& out);

/// A string value or fallback when the key is absent, null or not a string.
std::string json_str(const Json& obj, const char* key, const std::string& fallback = {});

/// The value under key, or a null value (a shared constant) when obj is not an object or has no
/// such key: a reference, never a copy (`obj.contains(k) ? obj[k] : Json()` copies the value).
const Json& json_at(const Json& obj, const char* key);

}  // namespace ctxfold
