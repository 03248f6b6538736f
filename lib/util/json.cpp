#include "util/json.hpp"
#include "util/json_sax.hpp"

#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>

namespace ctxfold {

// dump_json writes what nlohmann's Json::dump(-1, ' ', false, error_handler_t::replace) writes,
// byte for byte (tests/unit/util/json_dump_test.cpp compares the two on every record of the real
// transcripts and on generated trees), faster: a string is checked as UTF-8 by simdjson and
// copied in runs between the bytes JSON must escape, where nlohmann decodes and writes it one
// character at a time (a tenth of an import's CPU, bench/README.md "Import CPU: strings serialized
// in runs"). What only nlohmann decides is left to it: floats (its shortest round-trip form),
// strings that are not valid UTF-8 (its U+FFFD replacement rules), binary and discarded values.

namespace {

/// Whether JSON must escape byte c in a string: control characters, the quote and the backslash
/// (RFC 8259 section 7). nlohmann (ensure_ascii off) escapes exactly these, and not DEL or `/`.
constexpr bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

/// Where the first byte of s[from..) that needs escaping is, or s.size().
std::size_t next_escape(std::string_view s, std::size_t from) {
  std::size_t i = from;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), low = _mm_set1_epi8(0x1F);
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(x, low), low);  // x <= 0x1F, unsigned
    const __m128i hit = _mm_or_si128(control, _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)));
    if (const int mask = _mm_movemask_epi8(hit)) return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i < s.size(); ++i)
    if (needs_escape(static_cast<unsigned char>(s[i]))) return i;
  return s.size();
}

/// Appends s as a quoted JSON string to out (a std::string or a sink with append(const char*,
/// size_t)).
template <class Out>
void write_string(Out& out, const std::string& s) {
  if (!simdjson::validate_utf8(s.data(), s.size())) {
    const std::string quoted = Json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    out.append(quoted.data(), quoted.size());
    return;
  }
  out.append("\"", 1);
  const std::string_view v(s);
  std::size_t run = 0;
  for (std::size_t i = next_escape(v, 0); i < v.size(); i = next_escape(v, run)) {
    out.append(v.data() + run, i - run);
    const auto c = static_cast<unsigned char>(v[i]);
    switch (c) {
      case '"': out.append("\\\"", 2); break;
      case '\\': out.append("\\\\", 2); break;
      case '\b': out.append("\\b", 2); break;
      case '\f': out.append("\\f", 2); break;
      case '\n': out.append("\\n", 2); break;
      case '\r': out.append("\\r", 2); break;
      case '\t': out.append("\\t", 2); break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";  // nlohmann writes \u%04x: lowercase
        const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out.append(esc, 6);
      }
    }
    run = i + 1;
  }
  out.append(v.data() + run, v.size() - run);
  out.append("\"", 1);
}

template <class Out>
void write_json(Out& out, const Json& j) {
  switch (j.type()) {
    case Json::value_t::object: {
      out.append("{", 1);
      bool first = true;
      for (const auto& [key, value] : j.items()) {
        if (!first) out.append(",", 1);
        first = false;
        write_string(out, key);
        out.append(":", 1);
        write_json(out, value);
      }
      out.append("}", 1);
      return;
    }
    case Json::value_t::array: {
      out.append("[", 1);
      bool first = true;
      for (const Json& e : j) {
        if (!first) out.append(",", 1);
        first = false;
        write_json(out, e);
      }
      out.append("]", 1);
      return;
    }
    case Json::value_t::string:
      write_string(out, j.get_ref<const std::string&>());
      return;
    case Json::value_t::boolean:
      if (j.get<bool>()) out.append("true", 4);
      else out.append("false", 5);
      return;
    case Json::value_t::null:
      out.append("null", 4);
      return;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: {
      char buf[24];
      const auto r = j.is_number_unsigned() ? std::to_chars(buf, buf + sizeof buf, j.get<std::uint64_t>())
                                            : std::to_chars(buf, buf + sizeof buf, j.get<std::int64_t>());
      out.append(buf, static_cast<std::size_t>(r.ptr - buf));
      return;
    }
    default: {  // float, binary, discarded: nlohmann's own form
      const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      out.append(text.data(), text.size());
    }
  }
}

}  // namespace

std::string dump_json(const Json& j) {
  std::string out;
  write_json(out, j);
  return out;
}

void dump_json_to(const Json& j, JsonSink& sink) { write_json(sink, j); }

void append_json_string(std::string& out, const std::string& s) { write_string(out, s); }

// parse_json gives the value nlohmann::json::parse gives (key order, a repeated key's last value
// at its first place, integer kinds): most texts are read by simdjson (libsimdjson-dev) and
// copied, the rest (lone surrogate escapes, `-0`, anything simdjson refuses, texts over 16 MiB)
// by nlohmann, which then decides and words the error. tests/unit/util/json_test.cpp compares
// both readings on every record of the real transcripts.

namespace {

/// Texts up to this size go through simdjson; longer ones through nlohmann (simdjson's parser
/// reserves a tape of 8 bytes per input byte: address space only until touched, but a record of
/// many small values would touch it).
constexpr std::size_t kFastMax = std::size_t{16} << 20;
/// Above this size a text gets a parser of its own, freed after it, so the parser kept for the
/// thread holds at most this much capacity.
constexpr std::size_t kKeepMax = std::size_t{1} << 20;

/// A `\u` escape of a UTF-16 surrogate (`\uD800`..`\uDFFF`, any case) anywhere in text: such
/// texts take nlohmann's path, which decides on lone surrogates by its own rules.
bool any_surrogate_escape(std::string_view s) {
  for (std::size_t i = s.find('\\'); i != std::string_view::npos && i + 3 < s.size(); i = s.find('\\', i + 1)) {
    if (s[i + 1] != 'u' || (s[i + 2] != 'd' && s[i + 2] != 'D')) continue;
    const char c = s[i + 3];
    if ((c >= '8' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) return true;
  }
  return false;
}

/// A `-0` that may be a number token (after `[`, `,`, `:`, whitespace or at the start, and not
/// followed by a digit, `.` or an exponent): nlohmann reads it as a signed integer, simdjson as
/// the integer 0, so such texts take nlohmann's path.
bool any_minus_zero(std::string_view s) {
  for (std::size_t i = s.find("-0"); i != std::string_view::npos; i = s.find("-0", i + 1)) {
    const char b = i == 0 ? ' ' : s[i - 1];
    if (b != ' ' && b != '\t' && b != '\r' && b != '\n' && b != ',' && b != ':' && b != '[') continue;
    const char a = i + 2 < s.size() ? s[i + 2] : ' ';
    if (a == '.' || a == 'e' || a == 'E' || (a >= '0' && a <= '9')) continue;
    return true;
  }
  return false;
}

/// Copies a simdjson element into out with the value nlohmann's own parse gives: objects in
/// source order with a repeated key holding its last value at its first place, non-negative
/// integers as number_unsigned, negative ones as number_integer. Sets zero on an integer 0
/// (simdjson reads `-0` as one). False on a value whose nlohmann reading is not certain here (a
/// floating-point negative zero).
bool copy_element(simdjson::dom::element e, Json& out, bool& zero) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::ARRAY: {
      out = Json::array();
      auto& arr = out.get_ref<Json::array_t&>();
      const simdjson::dom::array items = e.get_array().value_unsafe();
      arr.reserve(items.size());
      for (simdjson::dom::element c : items) {
        arr.emplace_back();
        if (!copy_element(c, arr.back(), zero)) return false;
      }
      return true;
    }
    case T::OBJECT: {
      out = Json::object();
      const simdjson::dom::object fields = e.get_object().value_unsafe();
      // Sized up front: ordered_map is a vector of pair<const string, Json>, which a growing
      // vector copies (a const key makes the pair's move throwing), subtree and all.
      out.get_ref<Json::object_t&>().reserve(fields.size());
      for (simdjson::dom::key_value_pair kv : fields)
        if (!copy_element(kv.value, out[std::string(kv.key)], zero)) return false;
      return true;
    }
    case T::INT64: {
      const std::int64_t v = e.get_int64().value_unsafe();
      zero = zero || v == 0;
      if (v >= 0)
        out = static_cast<std::uint64_t>(v);
      else
        out = v;
      return true;
    }
    case T::UINT64: out = e.get_uint64().value_unsafe(); return true;
    case T::DOUBLE: {
      const double d = e.get_double().value_unsafe();
      if (d == 0 && std::signbit(d)) return false;
      out = d;
      return true;
    }
    case T::STRING: out = std::string(e.get_string().value_unsafe()); return true;
    case T::BOOL: out = e.get_bool().value_unsafe(); return true;
    case T::NULL_VALUE: out = nullptr; return true;
  }
  return false;
}

/// Replays a simdjson element as the events nlohmann's SAX parser delivers for it.
bool replay(simdjson::dom::element e, JsonEvents& h) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::ARRAY: {
      if (!h.start_array()) return false;
      const simdjson::dom::array items = e.get_array().value_unsafe();
      for (simdjson::dom::element c : items)
        if (!replay(c, h)) return false;
      return h.end_array();
    }
    case T::OBJECT: {
      if (!h.start_object()) return false;
      const simdjson::dom::object fields = e.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair kv : fields)
        if (!h.key(kv.key) || !replay(kv.value, h)) return false;
      return h.end_object();
    }
    case T::INT64: {
      const std::int64_t v = e.get_int64().value_unsafe();
      return v >= 0 ? h.number_unsigned(static_cast<std::uint64_t>(v)) : h.number_integer(v);
    }
    case T::UINT64: return h.number_unsigned(e.get_uint64().value_unsafe());
    case T::DOUBLE: return h.number_float(e.get_double().value_unsafe());
    case T::STRING: return h.string(e.get_string().value_unsafe());
    case T::BOOL: return h.boolean(e.get_bool().value_unsafe());
    case T::NULL_VALUE: return h.null();
  }
  return false;
}

/// nlohmann's SAX interface over JsonEvents (the slow path of sax_parse_json).
struct NlohmannEvents {
  JsonEvents& h;
  bool null() { return h.null(); }
  bool boolean(bool b) { return h.boolean(b); }
  bool number_integer(Json::number_integer_t v) { return h.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return h.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return h.number_float(v); }
  bool string(Json::string_t& s) { return h.string(s); }
  bool binary(Json::binary_t&) { return false; }  // not produced from JSON text
  bool start_object(std::size_t) { return h.start_object(); }
  bool key(Json::string_t& k) { return h.key(k); }
  bool end_object() { return h.end_object(); }
  bool start_array(std::size_t) { return h.start_array(); }
  bool end_array() { return h.end_array(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};

/// The parser for a text of this size: the thread's (kept), or own (freed by the caller).
simdjson::dom::parser& parser_for(std::string_view text, std::optional<simdjson::dom::parser>& own) {
  thread_local simdjson::dom::parser kept;
  return text.size() > kKeepMax ? own.emplace() : kept;
}

/// simdjson's reading of text as nlohmann would give it; false when simdjson refuses the text
/// or the copy is not certain, and nlohmann is asked instead (it decides, and words the error).
bool fast_parse(std::string_view text, Json& out) {
  if (text.size() > kFastMax || any_surrogate_escape(text)) return false;
  std::optional<simdjson::dom::parser> own;
  simdjson::dom::parser& p = parser_for(text, own);
  simdjson::dom::element root;
  if (p.parse(text.data(), text.size(), true).get(root) != simdjson::SUCCESS) return false;
  bool zero = false;
  return copy_element(root, out, zero) && !(zero && any_minus_zero(text));
}

}  // namespace

bool sax_parse_json(std::string_view text, JsonEvents& h) {
  if (text.size() <= kFastMax && !any_surrogate_escape(text) && !any_minus_zero(text)) {
    std::optional<simdjson::dom::parser> own;
    simdjson::dom::element root;
    if (parser_for(text, own).parse(text.data(), text.size(), true).get(root) == simdjson::SUCCESS) return replay(root, h);
  }
  NlohmannEvents adapter{h};
  return Json::sax_parse(text.begin(), text.end(), &adapter);
}

Json parse_json(std::string_view text) {
  Json out;
  if (fast_parse(text, out)) return out;
  return Json::parse(text.begin(), text.end());
}

namespace {
/// The code unit of the `\uXXXX` escape at s[i] (s[i] == '\\'), or -1 when none is there.
long escape_unit(std::string_view s, std::size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  long v = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    const char c = s[k];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}
}  // namespace

std::size_t replace_lone_surrogate_escapes(std::string_view text, std::string& out) {
  out.clear();
  out.reserve(text.size());
  std::size_t replaced = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out.push_back(text[i++]);
      continue;
    }
    const long u = escape_unit(text, i);
    if (u < 0xD800 || u > 0xDFFF) {  // not a surrogate escape (or no \u escape at all): copy it whole
      const std::size_t n = u < 0 ? 2 : 6;
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    if (u <= 0xDBFF) {
      const long low = escape_unit(text, i + 6);
      if (low >= 0xDC00 && low <= 0xDFFF) {  // a valid pair
        out.append(text.substr(i, 12));
        i += 12;
        continue;
      }
    }
    out.append("\\uFFFD");
    ++replaced;
    i += 6;
  }
  return replaced;
}

const Json& json_at(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string json_str(const Json& obj, const char* key, const std::string& fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

}  // namespace ctxfold
