#include "util/json_digest.hpp"

#include <memory>
#include <string_view>

#include "util/digest.hpp"

namespace ctxfold {
namespace {

/// Feeds the serialized text to a SHA-256, buffered (64 KiB; a piece that long goes straight in).
class Sha256Sink : public JsonSink {
 public:
  explicit Sha256Sink(Sha256& sha) : sha_(sha) {}
  void append(const char* s, std::size_t length) override {
    if (buf_.size() + length > kBuffer) flush();
    if (length >= kBuffer) sha_.update(std::string_view(s, length));
    else buf_.append(s, length);
  }
  void flush() {
    if (!buf_.empty()) sha_.update(buf_);
    buf_.clear();
  }

 private:
  static constexpr std::size_t kBuffer = std::size_t{1} << 16;
  Sha256& sha_;
  std::string buf_;
};

/// Feeds dump_json(j) to sha.
void feed_json(Sha256& sha, const Json& j) {
  Sha256Sink out(sha);
  dump_json_to(j, out);
  out.flush();
}

}  // namespace

std::string dump_json_sha256(const Json& j) {
  Sha256 sha;
  feed_json(sha, j);
  return sha.hex();
}

void JsonSha256::text(std::string_view bytes) { sha_.update(bytes); }
void JsonSha256::json(const Json& j) { feed_json(sha_, j); }
std::string JsonSha256::hex() { return sha_.hex(); }

}  // namespace ctxfold
