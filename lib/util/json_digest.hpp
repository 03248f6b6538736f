#pragma once
#include <string>

#include "util/json.hpp"

namespace ctxfold {

/// sha256_hex(dump_json(j)) (util/digest.hpp, util/json.hpp) computed as the serializer writes,
/// without holding the serialized text: for digests of large documents (verify-invariants I10,
/// docs/invariants.md "Memory").
std::string dump_json_sha256(const Json& j);

}  // namespace ctxfold
