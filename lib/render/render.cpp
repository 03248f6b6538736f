#include "render/render.hpp"
#include "strategies/recap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "render/partial.hpp"
#include "snapcompact/archive.hpp"
#include "strategies/notes.hpp"
#include "tokens/estimate.hpp"
#include "tokens/requests.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

// ---------------------------------------------------------------- the spine walk

struct Coverage {
  std::string first;
  std::string last;
  std::int64_t count = 0;
};

std::optional<Coverage> coverage_of(const Node& summary) {
  auto it = summary.metadata.find("covers");
  if (it != summary.metadata.end() && it->is_object()) {
    Coverage c{json_str(*it, "first"), json_str(*it, "last"), 0};
    if (auto cnt = it->find("count"); cnt != it->end() && cnt->is_number_integer()) c.count = cnt->get<std::int64_t>();
    if (!c.first.empty() && !c.last.empty()) return c;
  }
  if (!summary.covers_ids.empty())
    return Coverage{summary.covers_ids.front(), summary.covers_ids.back(),
                    static_cast<std::int64_t>(summary.covers_ids.size())};
  return std::nullopt;
}

std::string message_role(const Node& n) {
  if (n.kind == kind::kSummary || n.is_view()) return role::kUser;
  if (n.role.empty()) return role::kUser;
  return n.role;
}

// ---------------------------------------------------------------- block helpers

std::optional<ImageDims> image_dims_of(const Json& block) {
  auto num = [&](const char* key) -> int {
    auto it = block.find(key);
    if (it != block.end() && it->is_number() && it->get<double>() >= 1) return static_cast<int>(it->get<double>());
    return 0;
  };
  int w = num("width"), h = num("height");
  if (w > 0 && h > 0) return ImageDims{w, h};
  if (auto it = block.find("data"); it != block.end() && it->is_string())
    return image_dimensions_base64(it->get_ref<const std::string&>());
  return std::nullopt;
}

std::string image_label(const Json& block) {
  auto d = image_dims_of(block);
  std::string mt = json_str(block, "media_type", "unknown");
  if (d) return fmt::format("[image {}x{} {}]", d->width, d->height, mt);
  return fmt::format("[image ? {}]", mt);
}

/// Plain text of a tool_result's content (string, or blocks with images as labels).
std::string content_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return content.is_null() ? std::string() : dump_json(content);
  std::string out;
  for (const auto& b : content) {
    std::string piece;
    if (b.is_string()) {
      piece = b.get<std::string>();
    } else {
      std::string type = json_str(b, "type");
      if (type == "text") piece = json_str(b, "text");
      else if (type == "image") piece = image_label(b);
      else if (type == "tool_result") piece = content_text(b.contains("content") ? b["content"] : Json());
      else continue;
    }
    if (!out.empty()) out += "\n";
    out += piece;
  }
  return out;
}

Json text_block(std::string text) { return Json{{"type", "text"}, {"text", std::move(text)}}; }

std::string tool_use_as_text(const Json& b) {
  return fmt::format("[tool_use {} {}] {}", json_str(b, "id"), json_str(b, "name"),
                     b.contains("input") ? dump_json(b["input"]) : std::string("{}"));
}

bool is_type(const Json& b, const char* t) { return b.is_object() && json_str(b, "type") == t; }

// ---------------------------------------------------------------- tool-pairing repair

/// Builds r.messages (and r.repairs) from r.items; see RenderedMessage.
void build_messages(Rendered& r) {
  const auto& items = r.items;
  using Pos = std::pair<std::size_t, std::size_t>;  // (item, block)
  std::map<std::string, std::vector<Pos>> results;   // tool_use_id -> result positions in order
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (message_role(items[i]) == role::kAssistant || !items[i].content.is_array()) continue;
    for (std::size_t b = 0; b < items[i].content.size(); ++b)
      if (is_type(items[i].content[b], "tool_result")) results[json_str(items[i].content[b], "tool_use_id")].push_back({i, b});
  }
  std::set<Pos> consumed;

  std::size_t i = 0;
  while (i < items.size()) {
    if (message_role(items[i]) == role::kAssistant) {
      RenderedMessage m{role::kAssistant, kind::kMessage, {}, Json::array()};
      std::vector<std::pair<std::string, std::string>> calls;  // (tool_use id, node)
      std::size_t j = i;
      for (; j < items.size() && message_role(items[j]) == role::kAssistant; ++j) {
        m.ids.push_back(items[j].id);
        if (!items[j].content.is_array()) continue;
        for (const auto& b : items[j].content) {
          if (is_type(b, "tool_use")) {
            calls.emplace_back(json_str(b, "id"), items[j].id);
            m.content.push_back(b);
          } else if (is_type(b, "tool_result")) {
            // A result inside an assistant record answers nothing a provider accepts: keep as text.
            std::string id = json_str(b, "tool_use_id");
            m.content.push_back(text_block(fmt::format("[tool result for {}, whose call is not in this context]\n{}", id,
                                                       content_text(b.contains("content") ? b["content"] : Json()))));
            r.repairs.push_back({"orphan_result_as_text", items[j].id, id});
          } else {
            m.content.push_back(b);
          }
        }
      }
      r.messages.push_back(std::move(m));
      if (!calls.empty()) {
        RenderedMessage tg{role::kTool, "tool_results", {}, Json::array()};
        for (const auto& [call_id, node] : calls) {
          std::optional<Pos> found;
          if (auto it = results.find(call_id); it != results.end())
            for (const auto& p : it->second)
              if (p.first >= j && !consumed.count(p)) {
                found = p;
                break;
              }
          if (found) {
            consumed.insert(*found);
            tg.content.push_back(items[found->first].content[found->second]);
            const std::string& src = items[found->first].id;
            if (std::find(tg.ids.begin(), tg.ids.end(), src) == tg.ids.end()) tg.ids.push_back(src);
          } else {
            tg.content.push_back(Json{{"type", "tool_result"},
                                      {"tool_use_id", call_id},
                                      {"content", kNoToolResultText},
                                      {"is_error", true}});
            r.repairs.push_back({"synthetic_result", node, call_id});
          }
        }
        r.messages.push_back(std::move(tg));
      }
      i = j;
      continue;
    }

    const Node& n = items[i];
    RenderedMessage m{message_role(n), n.is_view() ? kind::kSummary : kind::kMessage, {n.id}, Json::array()};
    if (n.content.is_array()) {
      for (std::size_t b = 0; b < n.content.size(); ++b) {
        const Json& blk = n.content[b];
        if (is_type(blk, "tool_result")) {
          if (consumed.count({i, b})) continue;
          std::string id = json_str(blk, "tool_use_id");
          m.content.push_back(text_block(fmt::format("[tool result for {}, whose call is not in this context]\n{}", id,
                                                     content_text(blk.contains("content") ? blk["content"] : Json()))));
          r.repairs.push_back({"orphan_result_as_text", n.id, id});
        } else if (is_type(blk, "tool_use")) {
          // A call outside an assistant turn cannot be a provider tool call.
          m.content.push_back(text_block(tool_use_as_text(blk)));
        } else {
          m.content.push_back(blk);
        }
      }
    } else if (n.content.is_string()) {
      m.content.push_back(text_block(n.content.get<std::string>()));
    }
    // A tool record whose results all moved up to their calls leaves nothing behind; what is left
    // of one (orphans as text) is read as user text.
    if (m.role == role::kTool) m.role = role::kUser;
    if (!m.content.empty()) r.messages.push_back(std::move(m));
    ++i;
  }
}

// ---------------------------------------------------------------- provider formats

std::string joined_text(const Json& content, const char* sep) {
  std::string out;
  for (const auto& b : content) {
    std::string piece;
    if (is_type(b, "text")) piece = json_str(b, "text");
    else if (is_type(b, "image")) piece = image_label(b);
    else continue;
    if (piece.empty()) continue;
    if (!out.empty()) out += sep;
    out += piece;
  }
  return out;
}

std::optional<std::string> image_url(const Json& b) {
  std::string data = json_str(b, "data");
  if (!data.empty()) {
    if (data.rfind("data:", 0) == 0) return data;
    return fmt::format("data:{};base64,{}", json_str(b, "media_type", "image/png"), data);
  }
  std::string ref = json_str(b, "ref");
  if (ref.rfind("http://", 0) == 0 || ref.rfind("https://", 0) == 0) return ref;
  return std::nullopt;
}

Json openai_messages(const Rendered& r) {
  Json out = Json::array();
  for (const auto& m : r.messages) {
    if (m.role == role::kTool) {
      for (const auto& b : m.content)
        out.push_back(Json{{"role", "tool"},
                           {"tool_call_id", json_str(b, "tool_use_id")},
                           {"content", content_text(b.contains("content") ? b["content"] : Json())}});
      continue;
    }
    if (m.role == role::kSystem) {
      std::string text = joined_text(m.content, "\n\n");
      if (!text.empty()) out.push_back(Json{{"role", "system"}, {"content", text}});
      continue;
    }
    if (m.role == role::kAssistant) {
      std::string text;
      Json calls = Json::array();
      for (const auto& b : m.content) {
        std::string piece;
        if (is_type(b, "tool_use")) {
          calls.push_back(Json{{"id", json_str(b, "id")},
                               {"type", "function"},
                               {"function",
                                {{"name", json_str(b, "name")},
                                 {"arguments", b.contains("input") ? dump_json(b["input"]) : std::string("{}")}}}});
          continue;
        }
        if (is_type(b, "text")) piece = json_str(b, "text");
        else if (is_type(b, "image")) piece = image_label(b);
        else continue;  // thinking, opaque: not sent to chat completions
        if (piece.empty()) continue;
        if (!text.empty()) text += "\n\n";
        text += piece;
      }
      if (text.empty() && calls.empty()) continue;
      Json msg{{"role", "assistant"}, {"content", text.empty() ? Json(nullptr) : Json(text)}};
      if (!calls.empty()) msg["tool_calls"] = calls;
      out.push_back(std::move(msg));
      continue;
    }
    // user (and the summary)
    Json parts = Json::array();
    for (const auto& b : m.content) {
      if (is_type(b, "text")) {
        if (!json_str(b, "text").empty()) parts.push_back(Json{{"type", "text"}, {"text", json_str(b, "text")}});
      } else if (is_type(b, "image")) {
        if (auto url = image_url(b)) parts.push_back(Json{{"type", "image_url"}, {"image_url", {{"url", *url}}}});
        else parts.push_back(Json{{"type", "text"}, {"text", image_label(b)}});
      }
    }
    if (parts.empty()) continue;
    if (parts.size() == 1 && json_str(parts[0], "type") == "text")
      out.push_back(Json{{"role", "user"}, {"content", parts[0]["text"]}});
    else
      out.push_back(Json{{"role", "user"}, {"content", parts}});
  }
  return out;
}

Json anthropic_image(const Json& b) {
  std::string data = json_str(b, "data");
  if (!data.empty()) {
    std::string mt = json_str(b, "media_type", "image/png");
    if (data.rfind("data:", 0) == 0) {
      auto semi = data.find(';'), comma = data.find(',');
      if (semi != std::string::npos && semi > 5 && semi < comma) mt = data.substr(5, semi - 5);
      data = comma == std::string::npos ? std::string() : data.substr(comma + 1);
    }
    return Json{{"type", "image"}, {"source", {{"type", "base64"}, {"media_type", mt}, {"data", data}}}};
  }
  std::string ref = json_str(b, "ref");
  if (ref.rfind("http://", 0) == 0 || ref.rfind("https://", 0) == 0)
    return Json{{"type", "image"}, {"source", {{"type", "url"}, {"url", ref}}}};
  return text_block(image_label(b));
}

/// tool_use.input must be an object for the Messages API: a string or other value (a Codex
/// custom tool's raw patch text) is wrapped as {"input": value} rather than lost.
Json anthropic_input(const Json& b) {
  auto it = b.find("input");
  if (it == b.end() || it->is_null()) return Json::object();
  if (it->is_object()) return *it;
  return Json{{"input", *it}};
}

/// Converts neutral blocks to Anthropic content blocks; drops what the Messages API must not see.
Json anthropic_blocks(const Json& content, bool inside_result) {
  Json out = Json::array();
  if (content.is_string()) {
    if (!content.get<std::string>().empty()) out.push_back(text_block(content.get<std::string>()));
    return out;
  }
  if (!content.is_array()) return out;
  for (const auto& b : content) {
    if (b.is_string()) {
      if (!b.get<std::string>().empty()) out.push_back(text_block(b.get<std::string>()));
      continue;
    }
    std::string type = json_str(b, "type");
    if (type == "text") {
      if (!json_str(b, "text").empty()) out.push_back(text_block(json_str(b, "text")));
    } else if (type == "image") {
      out.push_back(anthropic_image(b));
    } else if (inside_result) {
      continue;  // a tool_result's content holds only text and images
    } else if (type == "tool_use") {
      out.push_back(Json{{"type", "tool_use"},
                         {"id", json_str(b, "id")},
                         {"name", json_str(b, "name")},
                         {"input", anthropic_input(b)}});
    } else if (type == "tool_result") {
      Json res{{"type", "tool_result"}, {"tool_use_id", json_str(b, "tool_use_id")}};
      const Json c = b.contains("content") ? b["content"] : Json();
      if (c.is_string()) res["content"] = c;
      else res["content"] = anthropic_blocks(c, true);
      if (b.contains("is_error") && b["is_error"].is_boolean() && b["is_error"].get<bool>()) res["is_error"] = true;
      out.push_back(std::move(res));
    } else if (type == "thinking") {
      std::string sig = json_str(b, "signature");
      if (!sig.empty())
        out.push_back(Json{{"type", "thinking"}, {"thinking", json_str(b, "thinking")}, {"signature", sig}});
    } else if (type == "opaque") {
      const Json d = b.contains("data") ? b["data"] : Json();
      if (json_str(b, "provider") == "anthropic" && d.is_object() && json_str(d, "type") == "redacted_thinking")
        out.push_back(d);
    }
  }
  return out;
}

struct AnthropicBody {
  std::string system;
  Json messages = Json::array();
};

AnthropicBody anthropic_body(const Rendered& r) {
  AnthropicBody body;
  for (const auto& m : r.messages) {
    Json blocks;
    if (m.role == role::kSystem) {
      std::string text = joined_text(m.content, "\n\n");
      if (text.empty()) continue;
      if (body.messages.empty()) {
        if (!body.system.empty()) body.system += "\n\n";
        body.system += text;
        continue;
      }
      // A system message after the conversation began (a Codex developer message mid-session)
      // stays where it is, as marked user text: hoisting it into "system" would change the
      // request's prefix when it is appended (PRODUCT.md §4.10, prompt-cache stability).
      blocks = Json::array({Json{{"type", "text"}, {"text", std::string(kMidSystemPrefix) + text}}});
    }
    std::string role = m.role == role::kAssistant ? "assistant" : "user";
    if (m.role != role::kSystem) blocks = anthropic_blocks(m.content, false);
    if (blocks.empty()) continue;
    if (!body.messages.empty() && body.messages.back()["role"] == role) {
      for (auto& b : blocks) body.messages.back()["content"].push_back(std::move(b));
    } else {
      body.messages.push_back(Json{{"role", role}, {"content", std::move(blocks)}});
    }
  }
  // The Messages API requires the first message to be a user turn; a context that starts with an
  // assistant turn (a source excerpt whose earlier turns were never written) gets a marked
  // placeholder rather than an invalid request.
  if (!body.messages.empty() && body.messages.front()["role"] == "assistant")
    body.messages.insert(body.messages.begin(),
                         Json{{"role", "user"},
                              {"content", Json::array({Json{{"type", "text"},
                                                            {"text", "[ctxfold: the source holds no earlier user turn]"}}})}});
  // tool_result blocks lead their user message (Messages API requirement), order kept otherwise.
  for (auto& msg : body.messages) {
    if (msg["role"] != "user") continue;
    Json& c = msg["content"];
    Json results = Json::array(), rest = Json::array();
    for (auto& b : c) (is_type(b, "tool_result") ? results : rest).push_back(std::move(b));
    for (auto& b : rest) results.push_back(std::move(b));
    c = std::move(results);
  }
  return body;
}

Json ctxfold_messages(const Rendered& r) {
  Json out = Json::array();
  for (const auto& m : r.messages) {
    out.push_back(Json{{"id", m.ids.empty() ? Json(nullptr) : Json(m.ids.front())},
                       {"ids", m.ids},
                       {"kind", m.kind},
                       {"role", m.role},
                       {"content", m.content}});
  }
  return out;
}

const char* format_name(RenderFormat f) {
  switch (f) {
    case RenderFormat::ctxfold: return "ctxfold";
    case RenderFormat::openai: return "openai";
    case RenderFormat::anthropic: return "anthropic";
    case RenderFormat::text: return "text";
  }
  return "ctxfold";
}

std::string block_text(const Json& b) {
  if (b.is_string()) return b.get<std::string>();
  std::string type = json_str(b, "type");
  if (type == "text") return json_str(b, "text");
  if (type == "image") return image_label(b);
  if (type == "tool_use") return tool_use_as_text(b);
  if (type == "tool_result") {
    bool err = b.contains("is_error") && b["is_error"].is_boolean() && b["is_error"].get<bool>();
    return fmt::format("[tool_result {}{}]\n{}", json_str(b, "tool_use_id"), err ? " error" : "",
                       content_text(b.contains("content") ? b["content"] : Json()));
  }
  if (type == "thinking") return "[thinking]\n" + json_str(b, "thinking");
  if (type == "opaque") return fmt::format("[opaque {}]", json_str(b, "provider", "unknown"));
  return fmt::format("[{} block]", type.empty() ? std::string("unknown") : type);
}

}  // namespace

std::string fold_header(const RenderedFold& f) {
  if (f.kind == "archive")
    return fmt::format("[ctxfold snapcompact archive {}: the earlier conversation as text, {} source rows {} … {}; "
                       "`ctxfold expand {}` reads them]",
                       f.id, f.count, f.first, f.last, f.id);
  if (f.kind == "region")
    return fmt::format("[ctxfold region summary {}: {} source rows {} … {}; `ctxfold expand {}` reads them]", f.id,
                       f.count, f.first, f.last, f.id);
  return fmt::format("[ctxfold lcm summary {}, depth {}: {} source rows {} … {}; `ctxfold expand {}` reads them]", f.id,
                     f.depth, f.count, f.first, f.last, f.id);
}

RenderFormat parse_render_format(const std::string& s) {
  if (s == "ctxfold") return RenderFormat::ctxfold;
  if (s == "openai") return RenderFormat::openai;
  if (s == "anthropic") return RenderFormat::anthropic;
  if (s == "text") return RenderFormat::text;
  throw Error(Exit::usage, "render.format", fmt::format("unknown render format '{}'", s),
              "use one of: ctxfold, openai, anthropic, text");
}

namespace {

/// Bytes of the strings a row sends as text: text blocks, tool_result content (a string or its
/// text blocks), string content.
std::int64_t row_text_bytes(const Json& content) {
  if (content.is_string()) return static_cast<std::int64_t>(content.get_ref<const std::string&>().size());
  if (!content.is_array()) return 0;
  std::int64_t n = 0;
  for (const auto& b : content) {
    if (!b.is_object()) continue;
    if (is_type(b, "text") && b.contains("text") && b["text"].is_string())
      n += static_cast<std::int64_t>(b["text"].get_ref<const std::string&>().size());
    else if (is_type(b, "tool_result") && b.contains("content"))
      n += row_text_bytes(b["content"]);
  }
  return n;
}

/// Cuts the row's text strings, in order, to `budget` bytes in all (at a UTF-8 boundary); the
/// string where the budget runs out ends with `marker`, later ones become empty.
void cap_strings(Json& content, std::int64_t& budget, const std::string& marker, bool& marked) {
  auto cut = [&](Json& str) {
    auto& t = str.get_ref<std::string&>();
    const auto size = static_cast<std::int64_t>(t.size());
    if (size <= budget) {
      budget -= size;
      return;
    }
    t.resize(utf8_safe_prefix(t, static_cast<std::size_t>(std::max<std::int64_t>(budget, 0))));
    budget = 0;
    if (!marked) t += marker;
    marked = true;
  };
  if (content.is_string()) {
    cut(content);
    return;
  }
  if (!content.is_array()) return;
  for (auto& b : content) {
    if (!b.is_object()) continue;
    if (is_type(b, "text") && b.contains("text") && b["text"].is_string())
      cut(b["text"]);
    else if (is_type(b, "tool_result") && b.contains("content"))
      cap_strings(b["content"], budget, marker, marked);
  }
}

}  // namespace

void cap_row(Node& n, std::int64_t max_bytes, std::vector<TruncatedRow>& out) {
  if (max_bytes <= 0) return;
  const std::int64_t total = row_text_bytes(n.content);
  if (total <= max_bytes) return;
  // The cut moves back to a character boundary, so the bytes kept can be fewer than max_bytes:
  // a dry run without the marker finds them, and the marker states what is really shown.
  std::int64_t kept = 0;
  {
    Json probe = n.content;
    std::int64_t budget = max_bytes;
    bool marked = false;
    cap_strings(probe, budget, std::string(), marked);
    kept = row_text_bytes(probe);
  }
  const std::string marker = fmt::format(
      "\n[ctxfold: row {} truncated: {} of {} bytes shown; the whole row: `ctxfold show {}`, or search it with "
      "`ctxfold grep`]",
      n.id, kept, total, n.id);
  std::int64_t budget = max_bytes;
  bool marked = false;
  cap_strings(n.content, budget, marker, marked);
  out.push_back(TruncatedRow{n.id, total, kept});
}

Rendered render_context(Store& store, const std::string& session, const RenderOptions& opts) {
  if (opts.strategy != "rolling" && opts.strategy != "lcm" && opts.strategy != "raw" && opts.strategy != "snapcompact")
    throw Error(Exit::usage, "render.strategy", fmt::format("render does not know strategy '{}'", opts.strategy),
                "use rolling, lcm, snapcompact or raw");
  Rendered r;
  r.session = session;
  r.strategy = opts.strategy;
  // The view policy applied: snapcompact for a model that reads no images is rolling's (seed 002
  // "snapcompact uses rolling's text compaction for that model"; the archive stays stored).
  std::string eff = opts.strategy;
  if (eff == "snapcompact" && !lookup_model(opts.model).reads_images) {
    eff = "rolling";
    r.fallback = "rolling";
  }
  const bool snap = eff == "snapcompact";

  if (opts.head) {
    auto n = store.node(*opts.head, false);
    if (!n || n->seq > opts.as_of)
      throw Error(Exit::bad_input, "node.unknown", fmt::format("no node '{}'", *opts.head));
    if (n->session != session)
      throw Error(Exit::bad_input, "node.unknown",
                  fmt::format("node '{}' belongs to session '{}', not '{}'", *opts.head, n->session, session),
                  "pass --session with the node's session");
    r.head = *opts.head;
  } else {
    auto h = store.head(session, opts.as_of);
    if (!h)
      throw Error(Exit::bad_input, "render.no_head", fmt::format("session '{}' has no HEAD", session),
                  "import or append nodes first, or pass --head ID");
    r.head = *h;
  }

  std::optional<Node> summary;
  std::optional<Coverage> cov;
  // snapcompact reads the other strategies' stored folds as text ahead of its frames (seed 002):
  // its walk is rolling's, with the archive folds drawn as frames afterwards. lcm starts from the
  // active rolling (or imported) summary as its covered prefix; when one of its own folds
  // overlaps that summary's coverage (a rolling summary that read the lcm folds), the newest older
  // summary that none overlaps, else none (below): its saved nodes decide (seed 002 "rolling":
  // switching back to lcm uses its saved nodes; it never summarizes the rolling summary).
  if (eff == "rolling" || snap || eff == "lcm") {
    summary = store.active_summary(session, opts.as_of);
    if (summary) cov = coverage_of(*summary);
    if (summary && !cov) summary.reset();
  }

  // lcm folds by their last covered id, highest tree node (largest coverage) first.
  std::unordered_map<std::string, std::vector<Store::SummaryRange>> folds_by_last;
  std::unordered_set<std::string> archive_folds;
  std::unordered_set<std::string> region_ids;  // region summaries (seed 000 §7) among the folds
  if (eff == "rolling" || snap) {
    // A snapcompact archive is a stored fold: rolling reads it as text (seed 002 "stored folds"),
    // snapcompact as frames.
    for (auto& f : store.view_ranges(session, kind::kArchive, "snapcompact", opts.as_of)) {
      archive_folds.insert(f.id);
      folds_by_last[f.last].push_back(std::move(f));
    }
  }
  if (eff == "rolling" || eff == "lcm" || snap) {
    for (const char* st : {"lcm", "region"})
      for (auto& f : store.summary_ranges(session, st, opts.as_of)) {
        if (std::string_view(st) == "region") region_ids.insert(f.id);
        folds_by_last[f.last].push_back(std::move(f));
      }
    // lcm: the newest rolling/imported summary none of its own folds overlaps, the one its folds
    // were built after (a later rolling summary that read the lcm folds is not lcm's prefix).
    for (int tries = 0; eff == "lcm" && summary; ++tries) {
      bool overlaps = false;
      for (const auto& [last, v] : folds_by_last) {
        for (const auto& f : v)
          if (!region_ids.count(f.id) &&
              (store.covers_contains(summary->seq, f.first) || store.covers_contains(f.seq, cov->first))) {
            overlaps = true;
            break;
          }
        if (overlaps) break;
      }
      if (!overlaps) break;
      const std::int64_t older = summary->seq - 1;
      summary.reset();
      cov.reset();
      if (tries >= 16) break;
      summary = store.active_summary(session, older);
      if (summary) cov = coverage_of(*summary);
      if (summary && !cov) summary.reset();
    }
    for (auto& [last, v] : folds_by_last)
      std::sort(v.begin(), v.end(), [](const Store::SummaryRange& a, const Store::SummaryRange& b) {
        return a.count != b.count ? a.count > b.count : a.seq > b.seq;
      });
  }
  std::vector<RenderedFold> folds_rev;

  // Walk from HEAD to the root, newest first; a cycle or a dangling predecessor ends the walk.
  std::vector<Node> rev;
  std::unordered_set<std::string> visited;
  const std::int64_t limit = store.max_seq() + 1;
  bool summary_admitted = false, summary_jumped = false;
  std::optional<std::string> cur = r.head;
  while (cur) {
    if (!visited.insert(*cur).second) {
      r.warnings.push_back(fmt::format("{}predecessor cycle at node '{}': the walk stopped there", kPartialHistory, *cur));
      break;
    }
    if (r.spine_length >= limit) {
      r.warnings.push_back(fmt::format("{}the walk exceeded the database's node count and stopped", kPartialHistory));
      break;
    }
    auto n = store.node(*cur, false);
    if (!n || n->seq > opts.as_of) {
      r.warnings.push_back(fmt::format("{}predecessor '{}' does not exist: the walk stopped there", kPartialHistory, *cur));
      break;
    }
    ++r.spine_length;
    if (summary && !summary_jumped && n->id == cov->last) {
      // Seed 000 §3: the covered segment is on the spine; jump to its splice point.
      std::optional<Node> first = cov->first == n->id ? n : store.node(cov->first, false);
      bool spliced = first && first->seq <= opts.as_of &&
                     (summary_admitted || first->predecessor == summary->predecessor);
      if (spliced) {
        if (!summary_admitted) rev.push_back(*summary);
        summary_admitted = summary_jumped = true;
        r.summary = summary->id;
        cur = first->predecessor;
        continue;
      }
      r.warnings.push_back(fmt::format(
          "summary '{}' was not applied: its predecessor is not the predecessor of its first covered node '{}'",
          summary->id, cov->first));
      summary.reset();
    }
    if (auto fit = folds_by_last.find(n->id); fit != folds_by_last.end()) {
      bool applied = false;
      for (const auto& f : fit->second) {
        std::optional<Node> first = f.first == n->id ? n : store.node(f.first, false);
        if (!first || first->seq > opts.as_of || first->predecessor != f.predecessor) {
          r.warnings.push_back(fmt::format(
              "{} '{}' was not applied: its predecessor is not the predecessor of its first covered node '{}'",
              archive_folds.count(f.id) ? "snapcompact archive" : region_ids.count(f.id) ? "region summary" : "lcm summary",
              f.id, f.first));
          continue;
        }
        // Under rolling, a fold must not swallow the rolling summary's segment (or the summary
        // where it sits on the chain): the rolling summary already stands for that history.
        if (summary && !summary_jumped &&
            (store.covers_contains(f.seq, cov->last) || store.covers_contains(f.seq, summary->id)))
          continue;
        auto fold = store.node(f.id, false);
        if (!fold) continue;
        RenderedFold rf;
        rf.id = f.id;
        if (archive_folds.count(f.id)) rf.kind = "archive";
        if (region_ids.count(f.id)) rf.kind = "region";
        if (auto d = fold->metadata.find("depth"); d != fold->metadata.end() && d->is_number_integer())
          rf.depth = d->get<std::int64_t>();
        rf.first = f.first;
        rf.last = f.last;
        rf.first_seq = first->seq;
        rf.last_seq = n->seq;
        rf.count = f.count;
        Json content = Json::array({Json{{"type", "text"}, {"text", fold_header(rf)}}});
        if (fold->content.is_array())
          for (auto& b : fold->content) content.push_back(std::move(b));
        fold->content = std::move(content);
        rev.push_back(std::move(*fold));
        folds_rev.push_back(std::move(rf));
        cur = first->predecessor;
        applied = true;
        break;
      }
      if (applied) continue;
    }
    std::optional<std::string> next = n->predecessor;
    if (summary && !summary_admitted && n->id == summary->id) {
      rev.push_back(*summary);  // an imported summary sitting on the chain
      summary_admitted = true;
      r.summary = summary->id;
    } else if (n->is_model_input()) {
      rev.push_back(std::move(*n));
    }
    cur = std::move(next);
  }
  r.items.assign(std::make_move_iterator(rev.rbegin()), std::make_move_iterator(rev.rend()));
  r.folds.assign(std::make_move_iterator(folds_rev.rbegin()), std::make_move_iterator(folds_rev.rend()));
  if (snap) {
    // An archive stands in the request as its frames (seed 002 "snapcompact"): a caption, then one
    // PNG image block per frame the budget keeps. r.frames describes the newest archive's.
    for (const auto& f : r.folds)
      if (f.kind == "archive") r.archive = f.id;
    for (Node& n : r.items)
      if (archive_folds.count(n.id)) {
        if (n.content.is_array() && !n.content.empty()) n.content.erase(n.content.begin());  // the fold_header
        SnapSettings ss;
        const Json meta = n.metadata.value("snapcompact", Json::object());
        if (auto w = meta.find("window"); w != meta.end() && w->is_number_integer()) ss.window = w->get<std::int64_t>();
        if (auto a = meta.find("archive_percent"); a != meta.end() && a->is_number_integer()) ss.archive_percent = a->get<int>();
        if (auto m = meta.find("max_frames"); m != meta.end() && m->is_number_integer()) ss.max_frames = m->get<int>();
        if (opts.window) ss.window = opts.window;
        if (opts.archive_percent) ss.archive_percent = *opts.archive_percent;
        if (opts.max_frames) ss.max_frames = opts.max_frames;
        FrameSet fs = archive_frames(&store, n, opts.model, ss, opts.encode_frames);
        n.content = std::move(fs.content);
        if (r.archive && n.id == *r.archive) r.frames = fs.to_json();
      }
  }
  if (opts.notes && opts.strategy != "raw")
    if (auto notes = session_notes(store, session, opts.as_of)) {
      std::size_t at = 0;
      while (at < r.items.size() && r.items[at].is_model_input() && r.items[at].role == role::kSystem) ++at;
      Json content = Json::array({Json{{"type", "text"}, {"text", kNotesHeader}}});
      for (auto& b : notes->content) content.push_back(std::move(b));
      notes->content = std::move(content);
      r.notes = notes->id;
      r.items.insert(r.items.begin() + static_cast<std::ptrdiff_t>(at), std::move(*notes));
    }
  for (Node& n : r.items) cap_row(n, opts.max_row_bytes, r.truncated);

  // The rolling projection (seed 002 "rolling"): a bounded recap of the covered user messages,
  // quoted verbatim, follows the summary. It travels in the summary's own user message (its
  // blocks appended at render time, never stored), so the message list keeps one item per read
  // id; the "recap" section names the quoted ids.
  std::size_t summary_pos = r.items.size();
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    r.reads.push_back(r.items[i].id);
    if (r.summary && r.items[i].id == *r.summary) summary_pos = i;
  }
  std::optional<Recap> recap;
  if (summary_pos < r.items.size() && eff == "rolling") {
    recap = rolling_recap(store, r.items[summary_pos]);
    if (recap && recap->node.content.is_array())
      for (const auto& b : recap->node.content) r.items[summary_pos].content.push_back(b);
  }
  // Per-item estimates; thinking of turns before the latest user turn counts only where the
  // provider resends it (NodeEstimate::prior_turn_thinking).
  r.item_tokens.resize(r.items.size());
  r.item_prior_thinking.resize(r.items.size());
  std::size_t last_turn = 0;
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    NodeEstimate e = estimate_node(r.items[i]);
    r.item_tokens[i] = e.total;
    r.item_prior_thinking[i] = e.prior_turn_thinking;
    if (starts_user_turn(r.items[i])) last_turn = i;
  }
  auto add_section = [&](const char* kind_name, std::size_t from, std::size_t to) {
    if (from >= to) return;
    Section s{kind_name, {}, 0};
    for (std::size_t i = from; i < to; ++i) {
      s.ids.push_back(r.items[i].id);
      s.estimated_tokens += r.item_tokens[i] - (i < last_turn ? r.item_prior_thinking[i] : 0);
    }
    if (recap && from == summary_pos) s.estimated_tokens -= recap->estimated_tokens;  // counted in "recap"
    r.estimated_tokens += s.estimated_tokens;
    r.sections.push_back(std::move(s));
  };
  std::size_t sys_end = 0;
  while (sys_end < r.items.size() && r.items[sys_end].is_model_input() && r.items[sys_end].role == role::kSystem)
    ++sys_end;
  add_section("system", 0, sys_end);
  // After the system run: runs of raw items ("prefix" before the last summary or fold, "tail"
  // after it), the rolling summary (then its recap), and runs of folds.
  std::unordered_set<std::string> fold_ids;
  for (const auto& f : r.folds) fold_ids.insert(f.id);
  const char* fold_kind = eff == "lcm" ? "summary" : "folds";
  std::size_t last_view = sys_end;
  for (std::size_t i = sys_end; i < r.items.size(); ++i)
    if (i == summary_pos || fold_ids.count(r.items[i].id)) last_view = i + 1;
  auto kind_at = [&](std::size_t i) -> const char* {
    if (i == summary_pos) return "summary";
    if (r.notes && r.items[i].id == *r.notes) return "notes";
    if (snap && archive_folds.count(r.items[i].id)) return "frames";
    if (fold_ids.count(r.items[i].id)) return fold_kind;
    return i < last_view ? "prefix" : "tail";
  };
  for (std::size_t i = sys_end; i < r.items.size();) {
    const char* k = kind_at(i);
    std::size_t j = i + 1;
    if (i != summary_pos)
      while (j < r.items.size() && j != summary_pos && std::string_view(kind_at(j)) == k) ++j;
    add_section(k, i, j);
    if (i == summary_pos && recap) {
      r.sections.push_back(Section{"recap", recap->quoted_ids, recap->estimated_tokens});
      r.estimated_tokens += recap->estimated_tokens;
    }
    i = j;
  }

  build_messages(r);
  r.tokens = token_figure(store, r, opts.as_of);
  return r;
}

Json render_request_body(const Rendered& r, RenderFormat format) {
  switch (format) {
    case RenderFormat::openai: return Json{{"messages", openai_messages(r)}};
    case RenderFormat::anthropic: {
      AnthropicBody b = anthropic_body(r);
      Json body = Json::object();
      if (!b.system.empty()) body["system"] = b.system;
      body["messages"] = std::move(b.messages);
      return body;
    }
    case RenderFormat::ctxfold:
    case RenderFormat::text: return Json{{"messages", ctxfold_messages(r)}};
  }
  return Json::object();
}

Json render_to_json(const Rendered& r, RenderFormat format) {
  Json j = Json::object();
  j["schema"] = "ctxfold.render/1";
  j["session"] = r.session;
  j["head"] = r.head;
  j["strategy"] = r.strategy;
  j["format"] = format_name(format);
  j["summary"] = r.summary ? Json(*r.summary) : Json(nullptr);
  j["notes"] = r.notes ? Json(*r.notes) : Json(nullptr);
  if (r.strategy == "snapcompact") {
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
  switch (format) {
    case RenderFormat::openai: j["messages"] = openai_messages(r); break;
    case RenderFormat::anthropic: {
      AnthropicBody b = anthropic_body(r);
      j["system"] = b.system;
      j["messages"] = std::move(b.messages);
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
