#include "session/open.hpp"

#include "tokens/estimate.hpp"

namespace ctxfold {

Store open_store(const std::string& path, Store::Mode mode) {
  return Store::open(path, mode, &estimate_node_tokens);
}

}  // namespace ctxfold
