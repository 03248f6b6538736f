#include "util/dynlib.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "util/error.hpp"

namespace ctxfold {

DynLib::DynLib(const char* soname, const char* package)
    : handle_(dlopen(soname, RTLD_NOW | RTLD_LOCAL)), soname_(soname), package_(package) {
  if (handle_ == nullptr) {
    const char* why = dlerror();
    throw Error(Exit::environment, "dependency.missing",
                fmt::format("cannot load {} (Debian package {}): {}", soname_, package_,
                            why != nullptr ? why : "unknown error"),
                fmt::format("install the Debian package {}", package_));
  }
}

void* DynLib::symbol(const char* name) const {
  void* p = dlsym(handle_, name);
  if (p == nullptr) {
    throw Error(Exit::environment, "dependency.missing", fmt::format("{} (Debian package {}) has no symbol {}", soname_, package_, name),
                fmt::format("install a newer {}", package_));
  }
  return p;
}

}  // namespace ctxfold
