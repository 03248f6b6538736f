#include "forensics/redact.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace ctxfold {
namespace {

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool key_char(char c) { return alnum(c) || c == '_' || c == '-'; }
bool upper_digit(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool token_char(char c) { return alnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' || c == '/' || c == '='; }
bool email_local(char c) { return alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'; }
bool domain_char(char c) { return alnum(c) || c == '.' || c == '-'; }
bool user_char(char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; }

bool at(const std::string& s, std::size_t i, const char* p) { return s.compare(i, std::strlen(p), p) == 0; }

/// Length of a run of chars satisfying pred starting at i.
template <class Pred>
std::size_t run(const std::string& s, std::size_t i, Pred pred) {
  std::size_t j = i;
  while (j < s.size() && pred(s[j])) ++j;
  return j - i;
}

struct Match {
  std::size_t len = 0;   ///< bytes of the text replaced
  std::size_t skip = 0;  ///< bytes kept before the secret (the "/home/" of a home path)
  std::size_t secret = 0;
  const char* kind = nullptr;
};

Match match_at(const std::string& s, std::size_t i) {
  const bool boundary = i == 0 || !key_char(s[i - 1]);
  Match m;
  auto prefixed = [&](const char* prefix, std::size_t min_rest, auto pred, const char* kind) {
    if (!at(s, i, prefix)) return false;
    std::size_t p = std::strlen(prefix);
    std::size_t r = run(s, i + p, pred);
    if (r < min_rest) return false;
    m = Match{p + r, 0, p + r, kind};
    return true;
  };
  if (boundary) {
    if (prefixed("sk-ant-", 20, key_char, "api_key") || prefixed("sk-", 20, key_char, "api_key") ||
        prefixed("AIza", 35, key_char, "api_key") || prefixed("glpat-", 20, key_char, "api_key") ||
        prefixed("github_pat_", 22, key_char, "token"))
      return m;
    for (const char* p : {"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"})
      if (prefixed(p, 10, key_char, "api_key")) return m;
    for (const char* p : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"})
      if (prefixed(p, 36, alnum, "token")) return m;
    if ((at(s, i, "AKIA") || at(s, i, "ASIA")) && run(s, i + 4, upper_digit) == 16 &&
        (i + 20 >= s.size() || !alnum(s[i + 20])))
      return Match{20, 0, 20, "api_key"};
    if (at(s, i, "Bearer ")) {
      std::size_t r = run(s, i + 7, token_char);
      if (r >= 20) return Match{7 + r, 7, r, "token"};
    }
  }
  if (at(s, i, "-----BEGIN ")) {
    std::size_t eol = s.find("-----", i + 11);
    if (eol != std::string::npos && s.compare(eol - 11 > i ? eol - 11 : i, 11, "PRIVATE KEY") == 0) {
      std::size_t end = s.find("-----END ", eol);
      if (end != std::string::npos) {
        std::size_t close = s.find("-----", end + 9);
        if (close != std::string::npos) return Match{close + 5 - i, 0, close + 5 - i, "private_key"};
      }
    }
  }
  // Home folders: /home/NAME/, /Users/NAME/, C:\Users\NAME\ (also JSON-escaped \\), -home-NAME-.
  for (const char* p : {"/home/", "/Users/", "\\Users\\", "-home-", "-Users-"}) {
    if (!at(s, i, p)) continue;
    std::size_t pl = std::strlen(p);
    if (p[0] == '-' && i > 0 && key_char(s[i - 1]) && s[i - 1] != '-') continue;
    std::size_t r = run(s, i + pl, p[0] == '-' ? alnum : user_char);
    if (r == 0 || r > 64) continue;
    std::string name = s.substr(i + pl, r);
    if (name == "USER" || name == "user" || name.rfind("user", 0) == 0) continue;  // already anonymous
    if (i + pl + r < s.size() && s[i + pl + r] != p[pl - 1] && p[0] != '-') {
      // "/home/NAME" must end the token or continue as a path
      char c = s[i + pl + r];
      if (key_char(c)) continue;
    }
    return Match{pl + r, pl, r, "home_user"};
  }
  return m;
}

}  // namespace

std::string Redactor::placeholder(const std::string& kind, const std::string& value) {
  auto key = std::make_pair(kind, value);
  auto it = index_.find(key);
  if (it == index_.end()) {
    std::int64_t n = ++next_[kind];
    std::string ph = kind == "home_user" ? fmt::format("user{}", n) : fmt::format("[REDACTED:{}:{}]", kind, n);
    list_.push_back(Replacement{kind, ph, value.size(), 0});
    it = index_.emplace(key, list_.size() - 1).first;
  }
  ++list_[it->second].count;
  return list_[it->second].placeholder;
}

std::string Redactor::redact(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    // Cheap filter: every pattern starts with one of these bytes, or is an e-mail's '@'.
    if (c == 's' || c == 'A' || c == 'g' || c == 'x' || c == 'B' || c == '-' || c == '/' || c == '\\') {
      Match m = match_at(text, i);
      if (m.kind) {
        out.append(text, i, m.skip);
        out += placeholder(m.kind, text.substr(i + m.skip, m.secret));
        out.append(text, i + m.skip + m.secret, m.len - m.skip - m.secret);
        i += m.len;
        continue;
      }
    }
    if (c == '@' && !out.empty()) {
      // E-mail: back up over the local part already copied, forward over the domain.
      std::size_t l = 0;
      while (l < out.size() && email_local(out[out.size() - 1 - l])) ++l;
      std::size_t d = run(text, i + 1, domain_char);
      std::string domain = text.substr(i + 1, d);
      while (!domain.empty() && (domain.back() == '.' || domain.back() == '-')) domain.pop_back();
      std::size_t dot = domain.rfind('.');
      bool tld = dot != std::string::npos && dot + 2 < domain.size() + 0 && domain.size() - dot - 1 >= 2 &&
                 std::all_of(domain.begin() + static_cast<std::ptrdiff_t>(dot) + 1, domain.end(),
                             [](char x) { return (x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z'); });
      if (l > 0 && tld && out[out.size() - l] != '.') {
        std::string local = out.substr(out.size() - l);
        out.resize(out.size() - l);
        out += placeholder("email", local + "@" + domain);
        i += 1 + domain.size();
        continue;
      }
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

void Redactor::redact_json(Json& j) {
  if (j.is_string()) {
    j = redact(j.get<std::string>());
  } else if (j.is_array()) {
    for (auto& v : j) redact_json(v);
  } else if (j.is_object()) {
    bool image = j.contains("type") && j["type"].is_string() && j["type"].get<std::string>() == "image";
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      Json v = it.value();
      if (!(k == "encrypted_content" || k == "signature" || (image && k == "data"))) redact_json(v);
      out[redact(k)] = std::move(v);
    }
    j = std::move(out);
  }
}

std::vector<Redactor::Replacement> Redactor::report() const { return list_; }

}  // namespace ctxfold
