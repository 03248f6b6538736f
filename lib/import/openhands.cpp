// OpenHands trajectory importer (docs/import.md): a JSON array of events (or an object holding
// them under "history"), each an action or an observation. Session id = file stem; node ids
// "<session>:<event id>".
//
//   user message action          user node (args.content or message; image_urls → images)
//   agent action with tool_call_metadata
//                                ONE assistant node per model_response id: text from
//                                choices[0].message.content (else args.thought), a tool_use per
//                                choices[0].message.tool_calls (arguments parsed), metadata.usage
//                                = model_response.usage, metadata.model. Later actions of an
//                                already written response are kept as records (their calls are
//                                in the node already).
//   agent message action         assistant node with its text
//   system action                system node (the system prompt)
//   observation with tool_call_metadata.tool_call_id
//                                role "tool" node, tool_result{tool_use_id, content = observation
//                                content, is_error for "error" observations}; an edit
//                                observation of the ACI editor (extras.impl_source "oh_aci") with
//                                extras.formatted_output_and_error has that as its content: it is
//                                what the model received (OpenHands FileEditObservation.__str__
//                                returns it for OH_ACI; content holds the diff for the UI), the
//                                diff stays in metadata.event
//   anything else                kind "event" node (state changes, recalls, …)
// Each node keeps its event (model_response excepted, which the node's content represents)
// under metadata.event.
#include <set>

#include "import/formats_common.hpp"
#include "import/import.hpp"

namespace ctxfold {
namespace {

using import_detail::extra_keys;
using import_detail::image_from_url;
using import_detail::parse_arguments;
using import_detail::source_meta;
using import_detail::text_block;

constexpr const char* kOpenhandsFormat = "openhands";

std::string event_id(const Json& e, std::size_t index) {
  if (e.contains("id")) {
    if (e["id"].is_number_integer()) return std::to_string(e["id"].get<std::int64_t>());
    if (e["id"].is_string()) return e["id"].get<std::string>();
  }
  return "index" + std::to_string(index);
}

/// The event without tool_call_metadata.model_response (represented by the node's content).
Json event_without_response(const Json& e) {
  Json out = e;
  if (out.contains("tool_call_metadata") && out["tool_call_metadata"].is_object())
    out["tool_call_metadata"].erase("model_response");
  return out;
}

Json text_of(const Json& v) {
  Json blocks = Json::array();
  if (v.is_string()) {
    if (!v.get<std::string>().empty()) blocks.push_back(text_block(v.get<std::string>()));
  } else if (v.is_array()) {
    for (const auto& p : v) {
      std::string t = p.is_string() ? p.get<std::string>() : json_str(p, "text");
      if (!t.empty()) blocks.push_back(text_block(t));
    }
  }
  return blocks;
}

/// What the importer carries from one event to the next.
struct Run {
  ImportSink& sink;
  std::string session;
  std::set<std::string> responses_written;
  std::int64_t raw_arguments = 0, first_raw_line = 0;
};

/// The fields of one event the node kinds are told apart by.
struct EventFields {
  const Json& e;
  std::int64_t line;
  std::string source, action, observation;
  Json args, tcm;
};

/// An agent action with tool_call_metadata: the assistant node of its model response (text and
/// tool calls); false when that response was written already (the event is kept as a record).
bool fill_agent_call(Node& n, const EventFields& ev, Run& run) {
  const Json& tcm = ev.tcm;
  const Json& args = ev.args;
  const Json mr =
      tcm.contains("model_response") && tcm["model_response"].is_object() ? tcm["model_response"] : Json();
  std::string response_id = json_str(mr, "id");
  if (!response_id.empty() && run.responses_written.count(response_id)) {
    run.sink.keep_record(run.session, ev.line, "openhands.action", dump_json(ev.e));
    return false;
  }
  if (!response_id.empty()) run.responses_written.insert(response_id);
  n.role = role::kAssistant;
  const Json msg =
      mr.is_object() && mr.contains("choices") && mr["choices"].is_array() && !mr["choices"].empty()
          ? mr["choices"][0].value("message", Json::object())
          : Json::object();
  Json text = text_of(msg.contains("content") ? msg["content"] : Json());
  if (text.empty()) text = text_of(args.contains("thought") ? args["thought"] : Json());
  for (auto& b : text) n.content.push_back(b);
  bool have_calls = false;
  if (msg.contains("tool_calls") && msg["tool_calls"].is_array()) {
    for (const auto& tc : msg["tool_calls"]) {
      const Json fn = tc.contains("function") && tc["function"].is_object() ? tc["function"] : Json::object();
      bool parsed = false;
      Json input = fn.contains("arguments") && fn["arguments"].is_string()
                       ? parse_arguments(fn["arguments"].get<std::string>(), &parsed)
                       : Json::object();
      if (!parsed && run.raw_arguments++ == 0) run.first_raw_line = ev.line;
      n.content.push_back(Json{{"type", "tool_use"},
                               {"id", json_str(tc, "id")},
                               {"name", json_str(fn, "name")},
                               {"input", input}});
      have_calls = true;
    }
  }
  if (!have_calls) {
    // No model_response: the action itself is the call.
    n.content.push_back(Json{{"type", "tool_use"},
                             {"id", json_str(tcm, "tool_call_id")},
                             {"name", json_str(tcm, "function_name", ev.action)},
                             {"input", args}});
  }
  if (mr.is_object()) {
    if (mr.contains("usage")) n.metadata["usage"] = mr["usage"];
    if (mr.contains("model")) n.metadata["model"] = mr["model"];
    n.metadata["model_response"] = extra_keys(mr, {"choices", "usage"});
  }
  return true;
}

/// A user or agent message action: its text and images.
void fill_message(Node& n, const EventFields& ev) {
  const Json& e = ev.e;
  const Json& args = ev.args;
  n.role = ev.source == "user" ? role::kUser : role::kAssistant;
  Json text = text_of(args.contains("content") ? args["content"] : Json());
  if (text.empty()) text = text_of(e.contains("message") ? e["message"] : Json());
  n.content = text;
  if (args.contains("image_urls") && args["image_urls"].is_array())
    for (const auto& u : args["image_urls"])
      if (u.is_string()) n.content.push_back(image_from_url(u.get<std::string>()));
}

/// An observation answering a tool call: a tool_result.
void fill_observation(Node& n, const EventFields& ev) {
  const Json& e = ev.e;
  const std::string& observation = ev.observation;
  n.role = role::kTool;
  Json content = e.contains("content") ? e["content"] : Json("");
  if (!content.is_string()) content = dump_json(content);
  if (observation == "edit" && e.contains("extras") && e["extras"].is_object() &&
      json_str(e["extras"], "impl_source") == "oh_aci") {
    auto fo = e["extras"].find("formatted_output_and_error");
    if (fo != e["extras"].end() && fo->is_string()) content = *fo;
  }
  n.content.push_back(Json{{"type", "tool_result"},
                           {"tool_use_id", json_str(ev.tcm, "tool_call_id")},
                           {"content", content},
                           {"is_error", observation == "error"}});
}

/// The node of one event object; false when it is kept as a record instead.
bool fill_node(Node& n, const EventFields& ev, Run& run) {
  const Json& e = ev.e;
  if (!ev.action.empty() && ev.tcm.is_object() && ev.source == "agent") {
    if (!fill_agent_call(n, ev, run)) return false;
  } else if (!ev.action.empty() && ev.action == "message" && (ev.source == "user" || ev.source == "agent")) {
    fill_message(n, ev);
  } else if (ev.action == "system") {
    n.role = role::kSystem;
    const Json& args = ev.args;
    Json text = args.contains("content") ? args["content"] : (e.contains("message") ? e["message"] : Json());
    n.content = text_of(text);
  } else if (!ev.observation.empty() && ev.tcm.is_object() && !json_str(ev.tcm, "tool_call_id").empty()) {
    fill_observation(n, ev);
  } else {
    n.kind = kind::kEvent;
    Json text = text_of(e.contains("message") ? e["message"] : Json());
    if (text.empty()) text = text_of(e.contains("content") ? e["content"] : Json());
    n.content = text;
  }
  return true;
}

}  // namespace

void import_openhands(const std::string& path, ImportSink& sink) {
  auto opened = import_detail::open_item_document(path, sink, kOpenhandsFormat, "history", {"history"}, "an OpenHands trajectory");
  if (!opened) return;
  const std::string& session = opened->session;
  const std::string& file = opened->file;
  const std::vector<std::int64_t>& lines = opened->lines;
  const Json* events = &opened->items();
  std::optional<std::string> last;
  Run run{sink, session, {}};

  for (std::size_t i = 0; i < events->size(); ++i) {
    const Json& e = (*events)[i];
    std::int64_t line = import_detail::line_at(lines, i);
    if (!e.is_object()) {
      sink.warn(line, "record.unexpected", "event " + std::to_string(i) + " is not an object; kept verbatim");
      sink.keep_record(session, line, "event.unexpected", dump_json(e));
      continue;
    }
    std::string eid = event_id(e, i);
    std::string source = json_str(e, "source");
    std::string action = json_str(e, "action");
    std::string observation = json_str(e, "observation");
    Json args = e.contains("args") && e["args"].is_object() ? e["args"] : Json::object();
    Json tcm;
    if (e.contains("tool_call_metadata") && e["tool_call_metadata"].is_object())
      tcm = e["tool_call_metadata"];
    const EventFields ev{e, line, std::move(source), std::move(action), std::move(observation),
                   std::move(args), std::move(tcm)};
    Node n;
    n.id = session + ":" + eid;
    n.session = session;
    n.metadata["source"] = source_meta(kOpenhandsFormat, file, line, static_cast<std::int64_t>(i));
    if (e.contains("timestamp")) n.metadata["timestamp"] = e["timestamp"];
    if (!fill_node(n, ev, run)) continue;
    n.metadata["event"] = event_without_response(e);
    n.predecessor = last;
    last = sink.add(std::move(n), line);
  }
  if (run.raw_arguments > 0)
    sink.warn(run.first_raw_line, "tool.arguments_raw",
              std::to_string(run.raw_arguments) +
                  " tool call argument string(s) are not JSON objects; kept as {\"raw\": string}");
  if (last) sink.propose_head(session, *last);
}

}  // namespace ctxfold
