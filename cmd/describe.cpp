#include <fmt/format.h>

#include "context.hpp"
#include "util/utf8.hpp"
#include "recall/describe.hpp"

namespace ctxfold::cli {

namespace {
struct DescribeOptions {
  std::string id;
};

std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "-";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string id_list(const Json& a) {
  if (!a.is_array() || a.empty()) return "none";
  std::string s;
  for (std::size_t i = 0; i < a.size() && i < 8; ++i) s += (i ? " " : "") + (a[i].is_string() ? a[i].get<std::string>() : a[i].dump());
  if (a.size() > 8) s += fmt::format(" ... ({} in all)", a.size());
  return s;
}

/// The human view of describe's record (--text): a few labelled lines, then the summary text.
std::string describe_text(const Json& d) {
  std::string state = d["active"].is_null() ? "raw node"
                      : d["active"].get<bool>() ? "active"
                      : (d["superseded"].is_boolean() && d["superseded"].get<bool>()) ? "superseded"
                                                                                        : "inactive";
  std::string t = fmt::format("{}  {} {}  depth {}  {}  session {}\n", str(d, "id"), str(d, "kind"),
                              str(d, "role"), str(d, "depth"), state, str(d, "session"));
  if (const Json& c = d["coverage"]; c.is_object())
    t += fmt::format("  covers    {} rows: {} (seq {}) .. {} (seq {})\n", str(c, "count"), str(c, "first"),
                     str(c, "first_seq"), str(c, "last"), str(c, "last_seq"));
  t += fmt::format("  children  {}\n  parents   {}\n", id_list(d["children"]), id_list(d["parents"]));
  t += fmt::format("  tokens    {} estimated", str(d, "estimated_tokens"));
  if (!d["source_estimated_tokens"].is_null()) t += fmt::format(" for {} of covered rows", str(d, "source_estimated_tokens"));
  t += "\n";
  if (const Json& p = d["producer"]; p.is_object()) {
    std::string prod;
    for (auto& [k, v] : p.items())
      if (!v.is_null()) prod += fmt::format("{}{}={}", prod.empty() ? "" : " ", k, v.is_string() ? v.get<std::string>() : v.dump());
    if (!prod.empty()) t += "  producer  " + prod + "\n";
  }
  if (d["summary_text"].is_string()) {
    std::string text = d["summary_text"].get<std::string>();
    std::size_t cut = utf8_safe_prefix(text, 600);
    t += "\n" + text.substr(0, cut) + (cut < text.size() ? " ..." : "") + "\n";
  }
  return t;
}

int run_describe(Context& ctx, const DescribeOptions& o) {
  return for_each_id(o.id, [&](const std::string& id) {
    Json d = describe_node(ctx.db(), id);
    if (ctx.text)
      emit_text(describe_text(d));
    else
      emit(d);
  });
}
}  // namespace

std::function<int(Context&)> setup_describe(CLI::App& sub) {
  auto o = std::make_shared<DescribeOptions>();
  sub.add_option("id", o->id, "node id, or - to read ids (or ctxfold JSON records, grep matches too) from stdin")
      ->required();
  return [o](Context& ctx) { return run_describe(ctx, *o); };
}

}  // namespace ctxfold::cli
