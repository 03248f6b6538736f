#pragma once
// SAX reading of JSON text through simdjson, with nlohmann's events (lib/util/json.cpp).
#include <cstdint>
#include <string_view>

namespace ctxfold {

/// Receives the values of one JSON text in document order (sax_parse_json): the events of
/// nlohmann's SAX interface, strings as views valid during the call. Each returns false to stop
/// the parse.
class JsonEvents {
 public:
  virtual ~JsonEvents() = default;
  virtual bool null() = 0;
  virtual bool boolean(bool b) = 0;
  virtual bool number_integer(std::int64_t v) = 0;   ///< a negative integer (or `-0`)
  virtual bool number_unsigned(std::uint64_t v) = 0;  ///< a non-negative integer
  virtual bool number_float(double v) = 0;
  virtual bool string(std::string_view s) = 0;
  virtual bool key(std::string_view k) = 0;
  virtual bool start_object() = 0;
  virtual bool end_object() = 0;
  virtual bool start_array() = 0;
  virtual bool end_array() = 0;
};

/// Delivers text's values to h in the order and kinds nlohmann::json::sax_parse would (a
/// repeated key each time it appears). False when the text is not one JSON value (h may have
/// received the events before the error, as from nlohmann) or when h stopped. Read by simdjson
/// when parse_json would be (lib/util/json.cpp), else by nlohmann.
bool sax_parse_json(std::string_view text, JsonEvents& h);

}  // namespace ctxfold
