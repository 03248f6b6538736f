// The recall tools of `ctxfold mcp`: thin wrappers over the library calls and record builders
// the CLI commands use (recall/grep, recall/expand, recall/describe, forensics/index,
// forensics/compactions), each page shortened to the token bound.
#include "mcp/tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "forensics/compactions.hpp"
#include "forensics/index.hpp"
#include "recall/describe.hpp"
#include "recall/expand.hpp"
#include "recall/grep.hpp"
#include "tokens/estimate.hpp"
#include "util/error.hpp"
#include "util/graphemes.hpp"

namespace ctxfold::mcp {

namespace {

constexpr std::int64_t kMaxOffset = 1'000'000'000'000;
constexpr std::int64_t kIdBytes = 512;

Error bad_args(const std::string& message, const std::string& hint = {}) {
  return Error(Exit::usage, "mcp.arguments", message, hint);
}

std::optional<std::string> opt_string(const Json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) return std::nullopt;
  return it->get<std::string>();
}

/// The session a call names, else the server's, else the calling agent's when archived, else the
/// store's default, resolved against the snapshot.
std::string session_of(Store& st, const Json& args, const ToolLimits& limits) {
  if (auto named = opt_string(args, "session")) return st.resolve_session(named);
  if (limits.session) return st.resolve_session(limits.session);
  if (limits.agent_session && st.session(*limits.agent_session)) return *limits.agent_session;
  return st.resolve_session(std::nullopt);
}

Error over_cap(std::int64_t tokens, const ToolLimits& limits) {
  return Error(Exit::usage, "mcp.too_large",
               fmt::format("one record of the result is {} tokens, over the bound of {}", tokens, limits.max_tokens),
               "start `ctxfold mcp` with a larger --max-tokens");
}

/// The page for the largest limit <= `limit` whose result fits the token bound: halves the limit
/// until it does. Errors: over_cap when a page of one record is still too large.
Json fit_page(std::int64_t limit, const ToolLimits& limits, const std::function<Json(std::int64_t)>& page) {
  Json r = page(limit);
  std::int64_t tokens = result_tokens(r);
  while (tokens > limits.max_tokens) {
    if (limit <= 1) throw over_cap(tokens, limits);
    limit = std::max<std::int64_t>(1, limit / 2);
    r = page(limit);
    tokens = result_tokens(r);
  }
  return r;
}

ToolArg session_arg() {
  return {"session", ArgType::string,
          "session id; default: the server's --session, else the calling agent's own session when the archive "
          "holds it, else the only or newest main session",
          false, 0, kIdBytes};
}
ToolArg offset_arg(const char* what) { return {"offset", ArgType::integer, what, false, 0, kMaxOffset, {}, Json(0)}; }
ToolArg limit_arg(std::int64_t def, std::int64_t max, const char* what) {
  return {"limit", ArgType::integer, what, false, 1, max, {}, Json(def)};
}

Json run_grep(Store& st, const Json& a, const ToolLimits& limits) {
  GrepOptions o;
  o.pattern = a["pattern"].get<std::string>();
  o.regex = a["regex"].get<bool>();
  o.ignore_case = a["ignore_case"].get<bool>();
  o.in = parse_grep_in(a["in"].get<std::string>());
  o.scope = opt_string(a, "scope");
  o.offset = a["offset"].get<std::int64_t>();
  o.limit = a["limit"].get<std::int64_t>();
  const bool all = a["all_sessions"].get<bool>();
  if (all && o.scope) throw bad_args("scope and all_sessions exclude each other");
  if (!all && !o.scope) o.session = session_of(st, a, limits);
  std::vector<Json> raw, views;
  auto search = o.in == GrepIn::thinking ? grep_thinking : grep;
  const GrepTotals t = search(st, o, [&](const GrepMatch& m) { (m.raw ? raw : views).push_back(grep_match_record(m, o.in)); });
  return fit_page(o.limit, limits, [&](std::int64_t k) {
    Json matches = Json::array();
    for (std::size_t i = 0; i < raw.size() && static_cast<std::int64_t>(i) < k; ++i) matches.push_back(raw[i]);
    for (std::size_t i = 0; i < views.size() && static_cast<std::int64_t>(i) < k; ++i) matches.push_back(views[i]);
    const std::int64_t end = o.offset + k;
    const bool more = end < std::max(t.raw_matches, t.summary_matches);
    return Json{{"matches", matches},
                {"raw_matches", t.raw_matches},
                {"summary_matches", t.summary_matches},
                {"offset", o.offset},
                {"limit", k},
                {"next_offset", more ? Json(end) : Json(nullptr)},
                {"index", t.index}};
  });
}

Json run_expand(Store& st, const Json& a, const ToolLimits& limits) {
  const std::string id = a["id"].get<std::string>();
  const std::int64_t offset = a["offset"].get<std::int64_t>();
  return fit_page(a["limit"].get<std::int64_t>(), limits,
                  [&](std::int64_t k) { return expand_page_record(expand(st, id, offset, k)); });
}

Json run_describe(Store& st, const Json& a, const ToolLimits& limits) {
  Json d = describe_node(st, a["id"].get<std::string>());
  if (result_tokens(d) <= limits.max_tokens || !d["summary_text"].is_string()) return d;
  // The summary's own text is the one unbounded field: keep the prefix that fits.
  const std::string text = d["summary_text"].get<std::string>();
  std::int64_t keep = static_cast<std::int64_t>(grapheme_count(text));
  d["summary_text_truncated"] = true;
  return fit_page(keep, limits, [&](std::int64_t k) {
    d["summary_text"] = text.substr(0, grapheme_byte_offset(text, static_cast<std::size_t>(k)));
    return d;
  });
}

Json run_list(Store& st, const Json& a, const ToolLimits& limits) {
  const std::string session = session_of(st, a, limits);
  const std::int64_t offset = a["offset"].get<std::int64_t>();
  return fit_page(a["limit"].get<std::int64_t>(), limits, [&](std::int64_t k) {
    Json r = list_views(st, session, offset, k);
    const std::int64_t end = offset + static_cast<std::int64_t>(r["items"].size());
    r["limit"] = k;
    r["next_offset"] = end < r["total"].get<std::int64_t>() ? Json(end) : Json(nullptr);
    return r;
  });
}

Json run_sessions(Store& st, const Json& a, const ToolLimits& limits) {
  SessionFilter f;
  f.agent = opt_string(a, "agent");
  f.project = opt_string(a, "project");
  f.since = opt_string(a, "since");
  f.until = opt_string(a, "until");
  const std::vector<SessionIndexEntry> all = session_index(st, f);
  const auto total = static_cast<std::int64_t>(all.size());
  const std::int64_t offset = a["offset"].get<std::int64_t>();
  std::vector<Json> records;  // built once, for the largest page
  for (std::int64_t i = offset; i < total && i < offset + a["limit"].get<std::int64_t>(); ++i) {
    const SessionIndexEntry& e = all[static_cast<std::size_t>(i)];
    records.push_back(session_record(e, st.head(e.info.id), e.node_count));
  }
  return fit_page(a["limit"].get<std::int64_t>(), limits, [&](std::int64_t k) {
    Json items = Json::array();
    for (std::size_t i = 0; i < records.size() && static_cast<std::int64_t>(i) < k; ++i) items.push_back(records[i]);
    const std::int64_t end = offset + static_cast<std::int64_t>(items.size());
    return Json{{"total", total},
                {"offset", offset},
                {"limit", k},
                {"next_offset", end < total ? Json(end) : Json(nullptr)},
                {"sessions", items}};
  });
}

Json run_dropped(Store& st, const Json& a, const ToolLimits& limits) {
  const std::string session = session_of(st, a, limits);
  const std::vector<CompactionEntry> all = session_compactions(st, session);
  if (all.empty())
    throw Error(Exit::negative, "compactions.none", fmt::format("session '{}' has no compaction", session),
                "the dropped tool reports on a compaction: compact the session, or name another");
  auto wanted = opt_string(a, "summary_id");
  const CompactionEntry* c = &all.back();  // the newest
  if (wanted) {
    auto it = std::find_if(all.begin(), all.end(), [&](const CompactionEntry& e) { return e.summary_id == *wanted; });
    if (it == all.end())
      throw Error(Exit::bad_input, "compactions.unknown",
                  fmt::format("'{}' is not a compaction of session '{}'", *wanted, session),
                  "the compactions field of a result without summary_id lists them");
    c = &*it;
  }
  Json others = Json::array();
  for (const CompactionEntry& e : all) others.push_back({{"summary_id", e.summary_id}, {"timestamp", e.timestamp ? Json(*e.timestamp) : Json(nullptr)}});
  const std::int64_t offset = a["offset"].get<std::int64_t>();
  return fit_page(a["limit"].get<std::int64_t>(), limits, [&](std::int64_t k) {
    Json r = compaction_record(session, *c, offset, k);
    const std::int64_t end = offset + static_cast<std::int64_t>(r["dropped"].size());
    r["offset"] = offset;
    r["limit"] = k;
    r["next_offset"] = end < static_cast<std::int64_t>(c->dropped.size()) ? Json(end) : Json(nullptr);
    r["compactions"] = others;
    return r;
  });
}

std::vector<Tool> build_table() {
  std::vector<Tool> t;
  t.push_back({"grep", "Search the archived history",
               "Search a session's raw history and its summaries (what compaction replaced is still here). "
               "Returns one record per matching node (id, seq, covered_by: the summary that replaced it, a "
               "snippet); page with offset/limit (raw and summary matches are paged together at the same offset) "
               "and follow next_offset. Pass an id to expand or describe for more.",
               {{"pattern", ArgType::string, "text to find (literal unless regex is true)", true, 1, 4096},
                {"regex", ArgType::boolean, "pattern is an RE2 regular expression matched per line", false, 0, 0, {}, Json(false)},
                {"ignore_case", ArgType::boolean, "Unicode case folding", false, 0, 0, {}, Json(false)},
                {"in", ArgType::string, "where to look: raw history, summaries, both, or the thinking blocks", false, 0, 16,
                 {"raw", "summaries", "both", "thinking"}, Json("both")},
                {"scope", ArgType::string, "only the nodes this summary id covers, recursively", false, 0, kIdBytes},
                {"all_sessions", ArgType::boolean, "search every session of the archive", false, 0, 0, {}, Json(false)},
                session_arg(),
                offset_arg("skip the first N raw and the first N summary matches"),
                limit_arg(20, 200, "at most N raw and N summary matches (fewer when the page would pass the token bound)")},
               run_grep});
  t.push_back({"expand", "Read what a summary replaced",
               "The original rows a summary covers, as text, paged by graphemes (row separators count); follow "
               "next_offset for the next page.",
               {{"id", ArgType::string, "a summary id (from grep's covered_by, list or describe)", true, 1, kIdBytes},
                offset_arg("first grapheme of the page"),
                limit_arg(8000, 200000, "page size in graphemes (fewer when the page would pass the token bound)")},
               run_expand});
  t.push_back({"describe", "A node's place in the summary tree",
               "One node: kind, role, depth, whether it is active, the rows it covers, its child and parent "
               "summaries, its producer and its summary text.",
               {{"id", ArgType::string, "a node or summary id", true, 1, kIdBytes}},
               run_describe});
  t.push_back({"list", "The summaries of a session",
               "Every stored summary of a session, active or not, oldest first, with what each covers; paged.",
               {session_arg(), offset_arg("skip the first N summaries"), limit_arg(50, 500, "at most N summaries")},
               run_list});
  t.push_back({"sessions", "The sessions of the archive",
               "The archive's sessions: agent, project, title, models, time span, node and compaction counts, HEAD; "
               "filtered and paged.",
               {{"agent", ArgType::string, "only sessions of this agent (claude-code, codex, gemini, ...)", false, 0, 64},
                {"project", ArgType::string, "only sessions whose project or working directory contains this text", false, 0, 4096},
                {"since", ArgType::string, "only sessions whose last record is at or after this ISO-8601 time or date", false, 0, 64},
                {"until", ArgType::string, "only sessions whose first record is at or before this ISO-8601 time or date", false, 0, 64},
                offset_arg("skip the first N sessions"),
                limit_arg(50, 500, "at most N sessions")},
               run_sessions});
  t.push_back({"dropped", "What a compaction's summary dropped",
               "For one compaction (default: the session's newest), the identifiers (files, commands, URLs, errors, "
               "tool call ids, numbers) found in the history it covered that its summary does not keep, each with "
               "the node it first appeared in (grep or expand recalls it); counts per kind; paged.",
               {session_arg(),
                {"summary_id", ArgType::string, "the compaction's summary id (default: the newest compaction)", false, 0, kIdBytes},
                offset_arg("skip the first N dropped identifiers"),
                limit_arg(100, 1000, "at most N dropped identifiers")},
               run_dropped});
  return t;
}

const char* type_name(ArgType t) {
  switch (t) {
    case ArgType::string: return "string";
    case ArgType::integer: return "integer";
    case ArgType::boolean: return "boolean";
  }
  return "string";
}

bool has_type(const Json& v, ArgType t) {
  switch (t) {
    case ArgType::string: return v.is_string();
    case ArgType::integer: return v.is_number_integer() || (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<std::int64_t>(v.get<double>())) && std::abs(v.get<double>()) < 9e15);
    case ArgType::boolean: return v.is_boolean();
  }
  return false;
}

void check_value(const Tool& tool, const ToolArg& arg, const Json& v) {
  if (!has_type(v, arg.type))
    throw bad_args(fmt::format("{}: argument '{}' must be {} {}, not {}", tool.name, arg.name,
                               arg.type == ArgType::integer ? "an" : "a", type_name(arg.type), v.type_name()));
  if (arg.type == ArgType::string) {
    const auto& s = v.get_ref<const std::string&>();
    if (static_cast<std::int64_t>(s.size()) > arg.max)
      throw bad_args(fmt::format("{}: argument '{}' is {} bytes, more than the {} it may hold", tool.name, arg.name,
                                 s.size(), arg.max));
    if (static_cast<std::int64_t>(s.size()) < arg.min)
      throw bad_args(fmt::format("{}: argument '{}' must not be empty", tool.name, arg.name));
    if (!arg.choices.empty() && std::find(arg.choices.begin(), arg.choices.end(), s) == arg.choices.end()) {
      std::string list;
      for (const auto& c : arg.choices) list += (list.empty() ? "" : ", ") + c;
      throw bad_args(fmt::format("{}: argument '{}' is '{}', not one of {}", tool.name, arg.name, s, list));
    }
  }
  if (arg.type == ArgType::integer) {
    const double d = v.get<double>();
    if (d < static_cast<double>(arg.min) || d > static_cast<double>(arg.max))
      throw bad_args(fmt::format("{}: argument '{}' is {}, outside {}..{}", tool.name, arg.name, v.dump(), arg.min, arg.max));
  }
}

}  // namespace

const std::vector<Tool>& tool_table() {
  static const std::vector<Tool> table = build_table();
  return table;
}

const Tool* find_tool(const std::string& name) {
  for (const Tool& t : tool_table())
    if (name == t.name) return &t;
  return nullptr;
}

Json input_schema(const Tool& tool) {
  Json props = Json::object();
  Json required = Json::array();
  for (const ToolArg& a : tool.args) {
    Json p = {{"type", type_name(a.type)}, {"description", a.description}};
    if (a.type == ArgType::string) {
      if (a.min > 0) p["minLength"] = a.min;
      p["maxLength"] = a.max;
      if (!a.choices.empty()) p["enum"] = a.choices;
    }
    if (a.type == ArgType::integer) {
      p["minimum"] = a.min;
      p["maximum"] = a.max;
    }
    if (a.default_value) p["default"] = *a.default_value;
    props[a.name] = p;
    if (a.required) required.push_back(a.name);
  }
  Json s = {{"type", "object"}, {"properties", props}};
  if (!required.empty()) s["required"] = required;
  s["additionalProperties"] = false;
  return s;
}

Json check_arguments(const Tool& tool, const Json& args) {
  for (auto it = args.begin(); it != args.end(); ++it) {
    auto known = std::find_if(tool.args.begin(), tool.args.end(), [&](const ToolArg& a) { return it.key() == a.name; });
    if (known == tool.args.end()) {
      std::string names;
      for (const ToolArg& a : tool.args) names += (names.empty() ? "" : ", ") + std::string(a.name);
      throw bad_args(fmt::format("{}: unknown argument '{}'", tool.name, it.key().substr(0, 64)), "its arguments are " + names);
    }
  }
  Json out = Json::object();
  for (const ToolArg& a : tool.args) {
    auto it = args.find(a.name);
    if (it == args.end() || it->is_null()) {
      if (a.required) throw bad_args(fmt::format("{}: argument '{}' is required", tool.name, a.name));
      if (a.default_value) out[a.name] = *a.default_value;
      continue;
    }
    check_value(tool, a, *it);
    if (a.type == ArgType::integer)
      out[a.name] = it->is_number_integer() ? it->get<std::int64_t>() : static_cast<std::int64_t>(it->get<double>());
    else
      out[a.name] = *it;
  }
  return out;
}

std::int64_t result_tokens(const Json& result) { return estimate_text_tokens(dump_json(result)); }

}  // namespace ctxfold::mcp
