// render's outputs: the request body, the JSON document and the transcript text.
#include <fmt/format.h>

#include "render/blocks.hpp"
#include "render/format_gemini.hpp"
#include "render/format_responses.hpp"
#include "render/formats.hpp"
#include "render/render.hpp"
#include "render/view_policy.hpp"
#include "util/error.hpp"
#include "util/json_digest.hpp"

namespace ctxfold {
namespace {

const char* format_name(RenderFormat f) {
  switch (f) {
    case RenderFormat::ctxfold: return "ctxfold";
    case RenderFormat::openai: return "openai";
    case RenderFormat::anthropic: return "anthropic";
    case RenderFormat::gemini: return "gemini";
    case RenderFormat::responses: return "responses";
    case RenderFormat::text: return "text";
  }
  return "ctxfold";
}

}  // namespace

using namespace render_detail;

std::string fold_header(const RenderedFold& f) {
  if (f.kind == "archive")
    return fmt::format("[ctxfold snapcompact archive {}: the earlier conversation as text, {} source rows {} … {}; "
                       "`ctxfold expand {}` reads them]",
                       f.quoted, f.count, f.quoted_first, f.quoted_last, f.quoted);
  if (parse_label(f.kind) == StrategyLabel::region)
    return fmt::format("[ctxfold region summary {}: {} source rows {} … {}; `ctxfold expand {}` reads them]",
                       f.quoted, f.count, f.quoted_first, f.quoted_last, f.quoted);
  return fmt::format("[ctxfold lcm summary {}, depth {}: {} source rows {} … {}; `ctxfold expand {}` reads them]",
                     f.quoted, f.depth, f.count, f.quoted_first, f.quoted_last, f.quoted);
}

RenderFormat parse_render_format(const std::string& s) {
  if (s == "ctxfold") return RenderFormat::ctxfold;
  if (s == "openai") return RenderFormat::openai;
  if (s == "anthropic") return RenderFormat::anthropic;
  if (s == "gemini") return RenderFormat::gemini;
  if (s == "responses") return RenderFormat::responses;
  if (s == "text") return RenderFormat::text;
  throw Error(Exit::usage, "render.format", fmt::format("unknown render format '{}'", s),
              "use one of: ctxfold, openai, anthropic, gemini, responses, text");
}

Json render_request_body(const Rendered& r, RenderFormat format) {
  switch (format) {
    case RenderFormat::openai: return Json{{"messages", openai_messages(r)}};
    case RenderFormat::anthropic: {
      AnthropicBody b = anthropic_body(r);
      Json body = Json::object();
      if (!b.system.empty()) body["system"] = b.system_value();
      body["messages"] = std::move(b.messages);
      return body;
    }
    case RenderFormat::gemini: return gemini_request_body(r);
    case RenderFormat::responses: return responses_body(r);
    case RenderFormat::ctxfold:
    case RenderFormat::text: return Json{{"messages", ctxfold_messages(r)}};
  }
  return Json::object();
}

namespace {

/// The members of render_to_json's document before its format's own (messages and the like).
Json document_frame(const Rendered& r, RenderFormat format) {
  Json j = Json::object();
  j["schema"] = "ctxfold.render/1";
  j["session"] = r.session;
  j["head"] = r.head;
  j["strategy"] = r.strategy;
  j["format"] = format_name(format);
  j["summary"] = r.summary ? Json(*r.summary) : Json(nullptr);
  j["notes"] = r.notes ? Json(*r.notes) : Json(nullptr);
  {
    Json sp{{"known", r.system.known}, {"source", r.system.source}};
    sp["node"] = r.system.node ? Json(*r.system.node) : Json(nullptr);
    sp["chars"] = r.system.chars;
    sp["tools"] = r.system.tools >= 0 ? Json(r.system.tools) : Json(nullptr);
    j["system_prompt"] = std::move(sp);
  }
  if (const ViewPolicy* v = find_view_policy(r.strategy); v && v->frames) {
    j["archive"] = r.archive ? Json(*r.archive) : Json(nullptr);
    j["fallback"] = r.fallback ? Json(*r.fallback) : Json(nullptr);
    j["frames"] = r.frames.is_null() ? Json(nullptr) : r.frames;
  }
  Json folds = Json::array();
  for (const auto& f : r.folds)
    folds.push_back(Json{{"id", f.id},
                         {"kind", f.kind},
                         {"depth", f.depth},
                         {"covers",
                          {{"first", f.first},
                           {"last", f.last},
                           {"first_seq", f.first_seq},
                           {"last_seq", f.last_seq},
                           {"count", f.count}}}});
  j["folds"] = std::move(folds);
  j["reads"] = r.reads;
  Json sections = Json::array();
  for (const auto& s : r.sections)
    sections.push_back(Json{{"kind", s.kind}, {"ids", s.ids}, {"estimated_tokens", s.estimated_tokens}});
  j["sections"] = std::move(sections);
  j["estimated_tokens"] = r.estimated_tokens;
  j["tokens"] = r.tokens.to_json();
  if (!r.truncated.empty()) {
    Json t = Json::array();
    for (const auto& x : r.truncated)
      t.push_back(Json{{"id", x.id}, {"original_bytes", x.original_bytes}, {"kept_bytes", x.kept_bytes}});
    j["truncated"] = std::move(t);
  }
  j["spine_length"] = r.spine_length;
  Json repairs = Json::array();
  for (const auto& rp : r.repairs)
    repairs.push_back(Json{{"kind", rp.kind}, {"node", rp.node}, {"tool_use_id", rp.tool_use_id}});
  j["repairs"] = std::move(repairs);
  j["warnings"] = r.warnings;
  return j;
}

}  // namespace

std::string render_stream(const Rendered& r, RenderFormat format, const std::function<void(const Json&)>& on_message,
                          bool digest) {
  if (format != RenderFormat::openai && format != RenderFormat::anthropic)
    throw Error(Exit::internal, "render.stream_format", "render_stream: only the openai and anthropic formats stream");
  JsonSha256 sha;
  std::string suffix = "}";
  if (digest) {
    Json j = document_frame(r, format);
    if (format == RenderFormat::anthropic) {
      AnthropicBody b = anthropic_system(r);
      j["system"] = b.system.empty() ? Json(b.system) : b.system_value();
    } else if (Json ids = openai_tool_id_map(r); !ids.empty()) {
      suffix = ",\"tool_call_ids\":" + dump_json(ids) + "}";
    }
    std::string head = dump_json(j);  // "{...}": the frame holds members, so messages follow a comma
    head.back() = ',';
    sha.text(head);
    sha.text("\"messages\":[");
  }
  bool first = true;
  auto each = [&](Json&& m) {
    if (digest) {
      if (!first) sha.text(",");
      sha.json(m);
    }
    first = false;
    on_message(m);
  };
  if (format == RenderFormat::openai) {
    for (const auto& m : r.messages) openai_message(m, each);
  } else {
    AnthropicStream stream(each);
    for (const auto& m : r.messages) stream.add(m);
    stream.finish();
  }
  if (!digest) return {};
  sha.text("]");
  sha.text(suffix);
  return sha.hex();
}

Json anthropic_request_system(const Rendered& r) {
  AnthropicBody b = anthropic_system(r);
  return b.system.empty() ? Json(nullptr) : b.system_value();
}

Json render_to_json(const Rendered& r, RenderFormat format) {
  Json j = document_frame(r, format);
  switch (format) {
    case RenderFormat::openai:
      j["messages"] = openai_messages(r);
      if (Json ids = openai_tool_id_map(r); !ids.empty()) j["tool_call_ids"] = std::move(ids);
      break;
    case RenderFormat::anthropic: {
      AnthropicBody b = anthropic_body(r);
      j["system"] = b.system.empty() ? Json(b.system) : b.system_value();
      j["messages"] = std::move(b.messages);
      break;
    }
    case RenderFormat::gemini: {
      Json body = gemini_request_body(r);
      if (body.contains("systemInstruction")) j["systemInstruction"] = body["systemInstruction"];
      j["contents"] = std::move(body["contents"]);
      break;
    }
    case RenderFormat::responses: {
      Json b = responses_body(r);
      if (b.contains("instructions")) j["instructions"] = b["instructions"];
      j["input"] = std::move(b["input"]);
      break;
    }
    case RenderFormat::ctxfold: j["messages"] = ctxfold_messages(r); break;
    case RenderFormat::text:
      j["messages"] = ctxfold_messages(r);
      j["text"] = render_to_text(r);
      break;
  }
  return j;
}

std::string render_to_text(const Rendered& r) {
  std::string out;
  for (const auto& m : r.messages) {
    std::string ids;
    for (const auto& id : m.ids) ids += (ids.empty() ? "" : ", ") + id;
    std::string title = m.kind == kind::kSummary ? std::string("summary") : m.role;
    if (!out.empty()) out += "\n";
    out += ids.empty() ? fmt::format("## {}\n", title) : fmt::format("## {} ({})\n", title, ids);
    for (const auto& b : m.content) {
      out += block_text(b);
      out += "\n";
    }
  }
  return out;
}

}  // namespace ctxfold
