#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace ctxfold {

/// Replaces secrets in text with stable placeholders before a database is shared
/// (`ctxfold export --redact`). Kinds and what they match (a match starts at a word boundary):
///   api_key      sk-ant-…, sk-… (OpenAI, sk-proj-…), AIza… (Google, 35 more), xox[abprs]-… (Slack),
///                AKIA/ASIA + 16 upper-case letters or digits (AWS access key ids), glpat-… (GitLab)
///   token        ghp_/gho_/ghu_/ghs_/ghr_ + 36, github_pat_… (GitHub), "Bearer " + 20 or more token characters
///   private_key  a PEM block from "-----BEGIN … PRIVATE KEY-----" to its END line
///   email        local@domain.tld
///   home_user    the user name in /home/NAME/, /Users/NAME/, C:\Users\NAME\ and Claude's encoded
///                project folders -home-NAME-, -Users-NAME- (NAME → user1, user2, …)
/// The same secret always gets the same placeholder within one Redactor ("[REDACTED:api_key:1]"),
/// so references stay linked. The report never holds a secret: only kind, placeholder, length and
/// count.
class Redactor {
 public:
  struct Replacement {
    std::string kind;
    std::string placeholder;
    std::size_t length = 0;  ///< bytes of the original
    std::int64_t count = 0;
  };

  /// The text with every match replaced.
  std::string redact(const std::string& text);
  /// Redacts every string value of j in place (object keys too), except opaque payloads that
  /// cannot hold readable secrets: "encrypted_content", "signature" and image "data".
  void redact_json(Json& j);
  /// Every placeholder handed out, in first-seen order.
  std::vector<Replacement> report() const;

 private:
  std::string placeholder(const std::string& kind, const std::string& value);
  std::map<std::pair<std::string, std::string>, std::size_t> index_;
  std::map<std::string, std::int64_t> next_;
  std::vector<Replacement> list_;
};

}  // namespace ctxfold
