#include "session/export.hpp"

#include <fmt/format.h>

#include "model/node.hpp"
#include "util/error.hpp"

namespace ctxfold {

namespace {
Json opt(const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); }
}  // namespace

ExportCounts export_ctxfold(Store& st, const std::string& session, const std::function<void(const Json&)>& line) {
  std::optional<SessionInfo> found = st.session(session);
  if (!found) throw Error(Exit::bad_input, "session.unknown", fmt::format("no session '{}' in this database", session));
  const SessionInfo& s = *found;
  auto head = st.head(session);
  line(Json{{"schema", kSessionSchema},
            {"id", s.id},
            {"kind", s.kind},
            {"parent_session", opt(s.parent_session)},
            {"parent_node", opt(s.parent_node)},
            {"source", opt(s.source)},
            {"format", opt(s.format)},
            {"metadata", s.metadata},
            {"head", opt(head)}});
  ExportCounts c;
  c.session = session;
  st.for_each_node(session, [&](const Node& n) {
    Json j = Json::object();
    j["schema"] = kNodeSchema;
    Json body = node_to_json(n, false);  // named: items() of a temporary would dangle
    for (auto& [k, v] : body.items()) j[k] = std::move(v);
    line(j);
    ++c.nodes;
    if (n.is_view()) ++c.views;
    return true;
  });
  return c;
}

Json export_messages(Store& st, const std::string& session, RenderFormat format, std::vector<std::string>* warnings) {
  if (format != RenderFormat::openai && format != RenderFormat::anthropic)
    throw Error(Exit::usage, "export.format", "export_messages needs the openai or anthropic format");
  RenderOptions opts;
  opts.strategy = "raw";
  opts.max_row_bytes = 0;
  Rendered r = render_context(st, session, opts);
  if (warnings) *warnings = r.warnings;
  return render_request_body(r, format);
}

}  // namespace ctxfold
