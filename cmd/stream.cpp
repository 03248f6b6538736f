#include "stream.hpp"

#include "context.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
void check_fields(const Json& fields, bool summary) {
  if (!fields.is_object() || fields.contains("type") || (summary && fields.contains("schema")))
    throw Error(Exit::internal, "internal.stream",
                summary ? "a summary record's fields must be an object without \"type\" or \"schema\""
                        : "a JSON Lines record's fields must be an object without \"type\"");
}

/// The line {"type":type, ...fields}, fields serialized once and spliced in (a node record can be
/// large: no copy of it is made).
std::string line(std::string_view type, const Json& fields) {
  std::string out = "{\"type\":" + dump_json(Json(type));
  std::string rest = dump_json(fields);  // "{}" or "{...}"
  if (rest.size() > 2) out += "," + rest.substr(1);
  else out += "}";
  return out + "\n";
}
}  // namespace

void JsonLines::record(std::string_view type, const Json& fields) {
  if (closed_) throw Error(Exit::internal, "internal.stream", "a record after the stream's summary");
  check_fields(fields, false);
  emit_text(line(type, fields));
  ++records_;
}

void JsonLines::summary(std::string_view schema, const Json& fields) {
  if (closed_) throw Error(Exit::internal, "internal.stream", "a second summary record");
  check_fields(fields, true);
  Json j = {{"schema", schema}};
  for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
  emit_text(line("summary", j));
  closed_ = true;
}

}  // namespace ctxfold::cli
