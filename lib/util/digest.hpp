#pragma once
#include <string>
#include <string_view>

namespace ctxfold {

/// SHA-256 of bytes as 64 lowercase hex characters (GNU Nettle, util/libnettle.hpp).
std::string sha256_hex(std::string_view bytes);

/// Incremental SHA-256, for digests over many rows (snapshots, input digests).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  /// Starts a new digest on the same context (cheaper than a new object per digest).
  void reset();
  /// Finishes and returns 64 lowercase hex characters; the object must not be updated after.
  std::string hex();

  /// Room for Nettle's sha256_ctx (checked in digest.cpp), so a digest allocates nothing.
  struct State {
    alignas(8) unsigned char bytes[128];
  };

 private:
  State state_;
};

}  // namespace ctxfold
