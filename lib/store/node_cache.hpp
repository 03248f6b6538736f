#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

#include "model/node.hpp"

namespace ctxfold {

class Store;

/// A read cache for Store::node(id, false) on one Store, in the thread that made it, for the
/// scope's lifetime: the parsed nodes read are kept until their stored content and metadata reach
/// max_bytes, then reads go through uncached. For a reader that renders the same nodes several
/// times over an unchanging database (verify renders HEAD twice and its predecessor for I10).
/// Nodes are append-only, so a cached node never goes stale; the byte cap bounds the memory.
/// Scopes do not nest (a second one replaces the first until it ends).
class NodeCacheScope {
 public:
  NodeCacheScope(const Store& store, std::size_t max_bytes);
  ~NodeCacheScope();
  NodeCacheScope(const NodeCacheScope&) = delete;
  NodeCacheScope& operator=(const NodeCacheScope&) = delete;
  /// Drops what is cached (verify does so per session).
  void clear();

  /// Store::node's side: the cache for store in this thread, or nullptr.
  static NodeCacheScope* active(const Store& store);
  std::optional<Node> find(const std::string& id) const;
  /// Keeps n unless the cap is reached; stored_bytes: its stored content + metadata size.
  void keep(const Node& n, std::size_t stored_bytes);

 private:
  const Store* store_;
  std::size_t max_bytes_, bytes_ = 0;
  std::unordered_map<std::string, Node> nodes_;
  NodeCacheScope* outer_;
};

}  // namespace ctxfold
