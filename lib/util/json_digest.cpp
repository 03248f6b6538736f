#include "util/json_digest.hpp"

#include <memory>
#include <string_view>

#include "util/digest.hpp"

namespace ctxfold {
namespace {

/// nlohmann's serializer writes through an output adapter; this one feeds a SHA-256, buffered.
class Sha256Output : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  explicit Sha256Output(Sha256& sha) : sha_(sha) {}
  void write_character(char c) override {
    if (buf_.size() == kBuffer) flush();
    buf_.push_back(c);
  }
  void write_characters(const char* s, std::size_t length) override {
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

}  // namespace

namespace {

/// Feeds dump_json(j) to sha.
void feed_json(Sha256& sha, const Json& j) {
  auto out = std::make_shared<Sha256Output>(sha);
  // What dump_json (Json::dump(-1, ' ', false, replace)) does with its string adapter: indent -1
  // is no pretty printing, ensure_ascii false.
  nlohmann::detail::serializer<Json> s(out, ' ', nlohmann::json::error_handler_t::replace);
  s.dump(j, false, false, 0);
  out->flush();
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
