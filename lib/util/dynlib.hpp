#pragma once

namespace ctxfold {

/// A shared library opened at run time (dlopen(soname, RTLD_NOW | RTLD_LOCAL)) instead of linked,
/// for dependencies only some commands use: a linked library is loaded and relocated at the
/// start-up of every command (libcurl drew in ~30 libraries; libcrypto's own relocations were
/// ~40% of what the dynamic loader did for `ctxfold --version`). The build still finds each with
/// find_package, which gives the headers and the soname (CMakeLists.txt). Never closed.
class DynLib {
 public:
  /// Opens `soname`; throws Error(Exit::environment, "dependency.missing") naming it and the
  /// Debian `package` that provides it when it cannot be loaded.
  DynLib(const char* soname, const char* package);
  /// Sets `fn` to the symbol `name`; throws like the constructor when the library lacks it.
  template <class Fn>
  void get(Fn& fn, const char* name) const {
    fn = reinterpret_cast<Fn>(symbol(name));
  }

 private:
  void* symbol(const char* name) const;
  void* handle_;
  const char* soname_;
  const char* package_;
};

}  // namespace ctxfold
