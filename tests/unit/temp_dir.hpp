#pragma once
// A private directory under the system temp directory for one test, removed with everything in
// it when the test ends.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace ctxfold {

class TempDir {
 public:
  /// prefix names the directory (ctxfold-<prefix>-XXXXXX) so a leftover one tells which test made it.
  explicit TempDir(const std::string& prefix = "test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / ("ctxfold-" + prefix + "-XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// Writes content (bytes as given) to the file `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    std::string p = path(name);
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  /// The path of `name` in the directory (the file need not exist).
  std::string path(const std::string& name) const { return path_ + "/" + name; }
  const std::string& root() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ctxfold
