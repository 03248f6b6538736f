#pragma once
#include <string>
#include <string_view>

#include "util/digest.hpp"

#include "util/json.hpp"

namespace ctxfold {

/// sha256_hex(dump_json(j)) (util/digest.hpp, util/json.hpp) computed as the serializer writes,
/// without holding the serialized text: for digests of large documents (verify-invariants I10,
/// docs/invariants.md "Memory").
std::string dump_json_sha256(const Json& j);

/// One SHA-256 fed in order with raw text and with JSON values serialized as dump_json writes
/// them, holding neither: a document's digest computed piece by piece (its messages one at a time,
/// verify-invariants I10, docs/invariants.md "Memory"). hex() as Sha256::hex (util/digest.hpp).
class JsonSha256 {
 public:
  void text(std::string_view bytes);
  void json(const Json& j);
  std::string hex();

 private:
  Sha256 sha_;
};

}  // namespace ctxfold
