#include "store/node_cache.hpp"

namespace ctxfold {

namespace {
thread_local NodeCacheScope* current = nullptr;
}

NodeCacheScope::NodeCacheScope(const Store& store, std::size_t max_bytes)
    : store_(&store), max_bytes_(max_bytes), outer_(current) {
  current = this;
}

NodeCacheScope::~NodeCacheScope() { current = outer_; }

void NodeCacheScope::clear() {
  nodes_.clear();
  bytes_ = 0;
}

NodeCacheScope* NodeCacheScope::active(const Store& store) {
  return current && current->store_ == &store ? current : nullptr;
}

std::optional<Node> NodeCacheScope::find(const std::string& id) const {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

void NodeCacheScope::keep(const Node& n, std::size_t stored_bytes) {
  if (bytes_ >= max_bytes_) return;
  bytes_ += stored_bytes + n.id.size();
  nodes_.emplace(n.id, n);
}

}  // namespace ctxfold
