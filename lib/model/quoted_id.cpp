#include "model/quoted_id.hpp"

namespace ctxfold {

namespace {

/// forked_from.origin, else forked_from.id; empty for a node that is not a fork's copy.
std::string origin_of(const Json& metadata) {
  if (!metadata.is_object()) return {};
  auto f = metadata.find("forked_from");
  if (f == metadata.end() || !f->is_object()) return {};
  if (std::string o = json_str(*f, "origin"); !o.empty()) return o;
  return json_str(*f, "id");
}

}  // namespace

std::string quoted_id(const Node& n) {
  std::string o = origin_of(n.metadata);
  return o.empty() ? n.id : o;
}

Json forked_from_record(const std::string& source_session, const std::string& source_id,
                        const Json& source_metadata) {
  Json r{{"session", source_session}, {"id", source_id}};
  if (std::string o = origin_of(source_metadata); !o.empty()) r["origin"] = o;
  return r;
}

}  // namespace ctxfold
