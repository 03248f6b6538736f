#include "report/escape.hpp"

#include <fmt/format.h>

#include "util/utf8.hpp"

namespace ctxfold {

namespace {

/// The code point at s[i] (valid UTF-8) and its length in bytes.
char32_t decode(std::string_view s, std::size_t i, std::size_t& len) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return len = 1, b;
  if (b < 0xE0) return len = 2, ((b & 0x1F) << 6) | (s[i + 1] & 0x3F);
  if (b < 0xF0) return len = 3, ((b & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
  return len = 4, ((b & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
}

bool hidden_control(char32_t c) {
  if (c < 0x20) return c != '\t' && c != '\n' && c != '\r';
  return c == 0x7F || c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

std::string encode_anchor(std::string_view prefix, std::string_view id) {
  std::string out(prefix);
  for (char ch : id) {
    auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
        c == ':' || c == '-')
      out += ch;
    else
      out += fmt::format("~{:02X}", c);
  }
  return out;
}

}  // namespace

std::string visible_text(std::string_view text) {
  std::string valid;
  if (!utf8_valid(text)) {
    valid = utf8_sanitize(text);
    text = valid;
  }
  std::string out;
  out.reserve(text.size());
  std::size_t plain = 0;  // start of the run copied as it is
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = 1;
    char32_t c = decode(text, i, len);
    if (hidden_control(c)) {
      out.append(text.substr(plain, i - plain));
      out += fmt::format("[U+{:04X}]", static_cast<std::uint32_t>(c));
      plain = i + len;
    }
    i += len;
  }
  out.append(text.substr(plain));
  return out;
}

void append_html_escaped(std::string& out, std::string_view text) {
  std::size_t plain = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char* rep = nullptr;
    switch (text[i]) {
      case '&': rep = "&amp;"; break;
      case '<': rep = "&lt;"; break;
      case '>': rep = "&gt;"; break;
      case '"': rep = "&quot;"; break;
      case '\'': rep = "&#39;"; break;
      default: continue;
    }
    out.append(text.substr(plain, i - plain));
    out += rep;
    plain = i + 1;
  }
  out.append(text.substr(plain));
}

std::string html_text(std::string_view text) {
  std::string out;
  append_html_escaped(out, visible_text(text));
  return out;
}

std::string node_anchor(std::string_view id) { return encode_anchor("node-", id); }

std::string session_anchor(std::string_view id) { return encode_anchor("session-", id); }

}  // namespace ctxfold
