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

TEST(DynLibTest, Sha256ThroughTheLoadedLibnettleMatchesTheStandardVectors) {
  // FIPS 180-2 test vectors: libnettle is resolved at run time, the digests must not change.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a', fed in pieces that straddle the 64-byte blocks, on a context that was used
  // and reset first.
  Sha256 h;
  h.update("abc");
  EXPECT_EQ(h.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  h.reset();
  const std::string piece(999, 'a');
  for (int i = 0; i < 1000; ++i) h.update(piece);
  h.update(std::string(1000, 'a'));
  EXPECT_EQ(h.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
