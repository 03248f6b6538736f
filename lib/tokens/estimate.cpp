#include "tokens/estimate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "util/image.hpp"

namespace ctxfold {
namespace {

/// Reads a positive integer field (number or numeric string) of an image block.
std::optional<std::int64_t> dim_field(const Json& block, const char* key) {
  auto it = block.find(key);
  if (it == block.end()) return std::nullopt;
  if (it->is_number_integer() || it->is_number_unsigned()) {
    auto v = it->get<std::int64_t>();
    if (v > 0) return v;
  } else if (it->is_number_float()) {
    double v = it->get<double>();
    if (v >= 1 && v < 1e9) return static_cast<std::int64_t>(v);
  }
  return std::nullopt;
}

std::int64_t estimate_image_block(const Json& block, Provider p) {
  auto w = dim_field(block, "width");
  auto h = dim_field(block, "height");
  if (w && h) return estimate_image_tokens(static_cast<int>(std::min<std::int64_t>(*w, 1'000'000)),
                                           static_cast<int>(std::min<std::int64_t>(*h, 1'000'000)), p);
  if (auto it = block.find("data"); it != block.end() && it->is_string()) {
    if (auto d = image_dimensions_base64(it->get_ref<const std::string&>()))
      return estimate_image_tokens(d->width, d->height, p);
  }
  return kUnknownImageTokens;
}

// ---- the text scanner ----

/// Byte classes of ASCII for the scanner.
enum : unsigned char { kLower, kUpper, kDigit, kNewline, kSpace, kCr, kPunct, kHigh };

constexpr std::array<unsigned char, 256> make_classes() {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 256; ++c) {
    unsigned char k = kPunct;  // other ASCII: punctuation, symbols, control characters
    if (c >= 'a' && c <= 'z') k = kLower;
    else if (c >= 'A' && c <= 'Z') k = kUpper;
    else if (c >= '0' && c <= '9') k = kDigit;
    else if (c == '\n') k = kNewline;
    else if (c == ' ' || c == '\t') k = kSpace;
    else if (c == '\r') k = kCr;  // "\r\n" costs what "\n" costs
    else if (c >= 0x80) k = kHigh;
    t[static_cast<std::size_t>(c)] = k;
  }
  return t;
}
constexpr std::array<unsigned char, 256> kClass = make_classes();

bool is_cjk(char32_t cp) {
  return (cp >= 0x2E80 && cp <= 0x9FFF) ||   // CJK radicals, kana, CJK symbols, ideographs
         (cp >= 0xAC00 && cp <= 0xD7AF) ||   // Hangul syllables
         (cp >= 0xF900 && cp <= 0xFAFF) ||   // CJK compatibility ideographs
         (cp >= 0xFF00 && cp <= 0xFFEF) ||   // halfwidth and fullwidth forms
         (cp >= 0x20000 && cp <= 0x3FFFF);   // CJK extension planes
}

/// Letters of alphabetic scripts other than ASCII (Latin-1 supplement and extensions, Greek,
/// Cyrillic, Armenian, Hebrew, Arabic, Indic, Thai, Georgian, Ethiopic, ...).
bool is_other_script(char32_t cp) {
  return (cp >= 0x00C0 && cp <= 0x024F && cp != 0xD7 && cp != 0xF7) || (cp >= 0x0370 && cp <= 0x1FFF);
}

}  // namespace

std::int64_t estimate_text_tokens_bytes4(std::string_view text) {
  return static_cast<std::int64_t>((text.size() + 3) / 4);
}

std::int64_t estimate_text_tokens(std::string_view text) {
  if (text.empty()) return 0;
  // Counts per class; the weights apply once at the end.
  std::int64_t words = 0, long_letters = 0, camel = 0, digits = 0, punct = 0, newlines = 0, space_runs = 0,
               symbols = 0, cjk = 0, other = 0, astral = 0, invalid = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  std::int64_t run = 0;     // letters in the current ASCII letter run
  bool prev_lower = false;  // the previous byte was a lowercase letter of the run
  std::int64_t spaces = 0;  // length of the current space/tab run
  while (i < n) {
    const unsigned char c = p[i];
    const unsigned char k = kClass[c];
    if (k != kSpace) {
      if (spaces >= 2) space_runs += (spaces + 15) / 16;
      spaces = 0;
    }
    if (k == kLower || k == kUpper) {
      if (run == 0) ++words;
      else if (k == kUpper && prev_lower) ++camel;
      if (++run > 6) ++long_letters;
      prev_lower = k == kLower;
      ++i;
      continue;
    }
    run = 0;
    prev_lower = false;
    switch (k) {
      case kDigit: ++digits; ++i; continue;
      case kNewline: ++newlines; ++i; continue;
      case kSpace: ++spaces; ++i; continue;
      case kCr: ++i; continue;
      case kPunct: ++punct; ++i; continue;
      default: break;
    }
    // A UTF-8 sequence: decode and validate (overlongs, surrogates and truncation are invalid).
    std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    char32_t cp = 0;
    bool ok = len != 0 && c <= 0xF4 && i + len <= n;
    if (ok) {
      cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
      for (std::size_t j = 1; j < len; ++j) {
        if ((p[i + j] & 0xC0) != 0x80) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (p[i + j] & 0x3F);
      }
      if (ok) ok = !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
                   !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (!ok) {
      ++invalid;
      ++i;
      continue;
    }
    i += len;
    if (is_cjk(cp)) ++cjk;
    else if (cp > 0xFFFF) ++astral;
    else if (is_other_script(cp)) ++other;
    else ++symbols;
  }
  if (spaces >= 2) space_runs += (spaces + 15) / 16;
  const TextWeights& w = kTextWeights;
  double t = w.word * static_cast<double>(words) + w.long_letter * static_cast<double>(long_letters) +
             w.camel * static_cast<double>(camel) + w.digit * static_cast<double>(digits) +
             w.punct * static_cast<double>(punct) + w.newline * static_cast<double>(newlines) +
             w.space_run * static_cast<double>(space_runs) + w.symbol * static_cast<double>(symbols) +
             w.cjk * static_cast<double>(cjk) + w.other_script * static_cast<double>(other) +
             w.astral * static_cast<double>(astral) + w.invalid_byte * static_cast<double>(invalid);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(t)));
}

std::int64_t estimate_image_tokens(int width, int height, Provider p) {
  if (width <= 0 || height <= 0) return kUnknownImageTokens;
  double w = width, h = height;
  if (p == Provider::openai) {
    // High detail: fit within 2048x2048, then scale the shortest side down to 768.
    double s = std::min(1.0, 2048.0 / std::max(w, h));
    w *= s;
    h *= s;
    s = std::min(1.0, 768.0 / std::min(w, h));
    w *= s;
    h *= s;
    auto tiles = static_cast<std::int64_t>(std::ceil(w / 512.0) * std::ceil(h / 512.0));
    return 85 + 170 * tiles;
  }
  if (p == Provider::gemini) {
    if (w <= 384 && h <= 384) return 258;
    return 258 * static_cast<std::int64_t>(std::ceil(w / 768.0) * std::ceil(h / 768.0));
  }
  double long_edge = std::max(w, h);
  if (long_edge > kImageMaxEdge) {
    double scale = kImageMaxEdge / long_edge;
    w = std::max(1.0, std::floor(w * scale));
    h = std::max(1.0, std::floor(h * scale));
  }
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(w * h / 750.0)));
}

namespace {

const Framing& framing_of(Provider p) { return p == Provider::openai ? kOpenAIFraming : kAnthropicFraming; }

struct BlockCounter {
  Provider p;
  Estimator e;
  const Framing& f;

  std::int64_t text(std::string_view s) const {
    return e == Estimator::bytes4 ? estimate_text_tokens_bytes4(s) : estimate_text_tokens(s);
  }

  std::int64_t content(const Json& c) const {
    if (c.is_string()) return text(c.get_ref<const std::string&>());
    if (!c.is_array()) return 0;
    std::int64_t t = 0;
    for (const auto& b : c) t += block(b);
    return t;
  }

  std::int64_t tool_input(const Json& input) const {
    if (input.is_null()) return 0;
    if (e == Estimator::bytes4) return text(dump_json(input));
    if (!input.is_object()) return f.tool_key + (input.is_string() ? text(input.get_ref<const std::string&>()) : text(dump_json(input)));
    std::int64_t t = 0;
    for (auto it = input.begin(); it != input.end(); ++it) {
      t += f.tool_key + text(it.key());
      t += it->is_string() ? text(it->get_ref<const std::string&>()) : text(dump_json(*it));
    }
    return t;
  }

  std::int64_t block(const Json& b) const {
    const bool legacy = e == Estimator::bytes4;
    const std::int64_t overhead = legacy ? kBlockOverhead : f.block;
    if (b.is_string()) return overhead + text(b.get_ref<const std::string&>());
    if (!b.is_object()) return overhead;
    auto ti = b.find("type");
    std::string_view type = ti != b.end() && ti->is_string() ? std::string_view(ti->get_ref<const std::string&>()) : std::string_view();
    auto field = [&](const char* key) -> std::string_view {
      auto it = b.find(key);
      return it != b.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>()) : std::string_view();
    };
    if (type == "text") return overhead + text(field("text"));
    if (type == "tool_use") {
      std::int64_t t = legacy ? kBlockOverhead + text(field("name")) + text(field("id")) : f.tool_use + text(field("name"));
      if (auto it = b.find("input"); it != b.end()) t += tool_input(*it);
      return t;
    }
    if (type == "tool_result") {
      std::int64_t t = legacy ? kBlockOverhead + text(field("tool_use_id")) : f.tool_result;
      if (auto it = b.find("content"); it != b.end()) t += content(*it);
      return t;
    }
    if (type == "image") return overhead + estimate_image_block(b, p);
    if (type == "thinking") {
      // Never resent: OpenAI reasoning; Gemini CLI thoughts (its history keeps only the parts
      // without `thought`: gemini-cli packages/core/src/core/geminiChat.ts, processStreamResponse);
      // Anthropic thinking without a signature (the renderer drops it).
      if (!legacy && (p == Provider::openai || p == Provider::gemini ||
                      (p == Provider::anthropic && field("signature").empty())))
        return 0;
      return overhead + text(field("thinking"));
    }
    if (type == "opaque") return overhead;  // encrypted or provider-side blobs: never counted by their encoding
    // Unknown blocks are kept verbatim; count their text fields, never "data" payloads.
    std::int64_t t = overhead;
    for (auto it = b.begin(); it != b.end(); ++it)
      if (it.key() != "data" && it.key() != "type" && it->is_string()) t += text(it->get_ref<const std::string&>());
    return t;
  }
};

/// Anthropic models that keep earlier turns' thinking in context: Opus 4.5+, Sonnet 4.6+ (and
/// any later major version). Model ids look like "claude-opus-4-6", "claude-haiku-4-5-20251001",
/// "claude-3-7-sonnet-20250219".
bool keeps_prior_thinking(std::string_view model) {
  if (model.rfind("claude-", 0) != 0) return true;  // unknown: keep (over-count)
  auto family_at = [&](std::string_view fam) { return model.find(fam); };
  std::size_t pos = std::string_view::npos;
  int fam = -1;  // 0 opus, 1 sonnet, 2 haiku
  if ((pos = family_at("opus-")) != std::string_view::npos) fam = 0;
  else if ((pos = family_at("sonnet-")) != std::string_view::npos) fam = 1;
  else if ((pos = family_at("haiku-")) != std::string_view::npos) fam = 2;
  if (fam < 0) return true;  // a family this rule does not know: keep (over-count)
  if (model.rfind("claude-3", 0) == 0) return false;  // claude-3-x-<family>: before any keeping model
  std::string_view rest = model.substr(model.find('-', pos) + 1);
  int major = 0, minor = 0;
  std::size_t i = 0;
  while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') major = major * 10 + (rest[i++] - '0');
  if (i < rest.size() && rest[i] == '-' && i + 1 < rest.size() && rest[i + 1] >= '0' && rest[i + 1] <= '9' &&
      (i + 2 >= rest.size() || rest[i + 2] == '-'))
    minor = rest[i + 1] - '0';  // a one-digit minor; an 8-digit date is not a minor version
  if (major == 0) return true;
  if (major >= 5) return true;
  if (major < 4) return false;
  if (fam == 0) return minor >= 5;
  if (fam == 1) return minor >= 6;
  return false;  // Haiku through 4.5
}

}  // namespace

Provider provider_of(const Node& n) {
  auto src = n.metadata.find("source");
  if (src == n.metadata.end() || !src->is_object()) return Provider::generic;
  auto f = src->find("format");
  if (f == src->end() || !f->is_string()) return Provider::generic;
  const std::string& fmt = f->get_ref<const std::string&>();
  if (fmt == "claude-code" || fmt == "anthropic") return Provider::anthropic;
  if (fmt == "codex" || fmt == "openai" || fmt == "openhands") return Provider::openai;
  if (fmt == "gemini") return Provider::gemini;
  if (fmt == "qwen") return Provider::openai;  // Qwen Code speaks OpenAI Chat Completions
  if (fmt == "copilot" || fmt == "cline") return Provider::openai;  // Copilot CLI's BYOK default: OpenAI Chat Completions
  return Provider::generic;
}

std::int64_t estimate_block_tokens(const Json& block, Provider p, Estimator e) {
  return BlockCounter{p, e, framing_of(p)}.block(block);
}

std::int64_t hook_reminder_tokens(const Node& n) {
  auto hb = n.metadata.find("hook_blocked");
  if (hb == n.metadata.end() || !hb->is_array() || !n.content.is_array()) return 0;
  const BlockCounter bc{Provider::anthropic, Estimator::content, kAnthropicFraming};
  std::int64_t t = 0;
  for (const auto& call : *hb) {
    if (!call.is_object()) continue;
    const std::string id = json_str(call, "tool_use_id");
    const Json* result = nullptr;
    for (const auto& b : n.content)
      if (b.is_object() && json_str(b, "type") == "tool_result" && json_str(b, "tool_use_id") == id) result = &b;
    if (!result) continue;
    std::string command;
    if (auto cs = call.find("commands"); cs != call.end() && cs->is_array())
      for (const auto& c : *cs)
        if (c.is_string() && c.get_ref<const std::string&>().size() > command.size()) command = c.get<std::string>();
    const std::string head = "<system-reminder>\n" + json_str(call, "hook") + " hook blocking error from command: \"" +
                             command + "\": ";
    t += bc.f.block + estimate_text_tokens(head) + estimate_text_tokens("\n</system-reminder>");
    if (auto c = result->find("content"); c != result->end()) t += bc.content(*c);
  }
  return t;
}

NodeEstimate estimate_node(const Node& n, Estimator e) {
  NodeEstimate out;
  if (n.kind == kind::kEvent) return out;
  const Provider p = e == Estimator::bytes4 ? Provider::generic : provider_of(n);
  BlockCounter bc{p, e, framing_of(p)};
  out.total = e == Estimator::bytes4 ? kMessageOverhead : bc.f.message;
  if (n.content.is_string()) {
    out.total += bc.text(n.content.get_ref<const std::string&>());
    return out;
  }
  if (!n.content.is_array()) return out;
  if (e == Estimator::content && p == Provider::anthropic) out.total += hook_reminder_tokens(n);
  bool drops = false, decided = false;
  for (const auto& b : n.content) {
    std::int64_t t = bc.block(b);
    out.total += t;
    if (e == Estimator::content && n.role == role::kAssistant && t > 0 && b.is_object() && json_str(b, "type") == "thinking") {
      if (!decided) {
        drops = p != Provider::openai && !keeps_prior_thinking(json_str(n.metadata, "model"));
        decided = true;
      }
      if (drops) out.prior_turn_thinking += t;
    }
  }
  return out;
}

std::int64_t estimate_node_tokens(const Node& n) { return estimate_node(n).total; }

}  // namespace ctxfold
