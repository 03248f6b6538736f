#include "util/dynlib.hpp"

#include <gtest/gtest.h>

#include "util/digest.hpp"
#include "util/error.hpp"

using namespace ctxfold;

TEST(DynLibTest, AMissingLibraryOrSymbolIsAnEnvironmentErrorNamingIt) {
  try {
    DynLib lib("libctxfold-no-such-library.so.0", "no-such-package");
    FAIL() << "opened a library that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit(), Exit::environment);
    EXPECT_EQ(e.code(), "dependency.missing");
    EXPECT_NE(std::string(e.what()).find("libctxfold-no-such-library.so.0"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("no-such-package"), std::string::npos) << e.hint();
  }
  DynLib libc("libc.so.6", "libc6");
  void (*fn)() = nullptr;
  EXPECT_THROW(libc.get(fn, "ctxfold_no_such_symbol"), Error);
  int (*abs_fn)(int) = nullptr;
  libc.get(abs_fn, "abs");
  ASSERT_NE(abs_fn, nullptr);
  EXPECT_EQ(abs_fn(-3), 3);
}

TEST(DynLibTest, Sha256ThroughTheLoadedLibcryptoMatchesTheStandardVectors) {
  // FIPS 180-2 test vectors: libcrypto is resolved at run time, the digests must not change.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
