#include "invariants/catalog.hpp"

#include <stdexcept>
#include <string>

namespace ctxfold {

const InvariantInfo* find_invariant(std::string_view id) {
  for (const InvariantInfo& row : kInvariants)
    if (row.id == id) return &row;
  return nullptr;
}

Check make_check(std::string_view id) {
  const InvariantInfo* row = find_invariant(id);
  if (!row) throw std::logic_error("make_check: no invariant " + std::string(id));
  return Check{std::string(row->id), std::string(row->name), true, {}, {}};
}

std::string invariant_source(const std::string& id) {
  const InvariantInfo* row = find_invariant(id);
  return row ? std::string(row->source) : std::string();
}

}  // namespace ctxfold
