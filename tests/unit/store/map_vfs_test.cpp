// The whole-file mapping of read-only connections (lib/store/map_vfs.hpp): reads through it give
// the bytes pread gives, pages written after the mapping are still read (past its end), and only
// read-only connections can turn it on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "store/db.hpp"
#include "store/map_vfs.hpp"

namespace ctxfold {
namespace {

namespace fs = std::filesystem;

std::string blob_of(int i) {
  std::string s(9000 + i * 37, '\0');  // spans overflow pages
  for (std::size_t k = 0; k < s.size(); ++k) s[k] = static_cast<char>('a' + (k * 7 + static_cast<std::size_t>(i)) % 26);
  return s;
}

TEST(MapVfsTest, MappedReadsEqualTheStoredBytesAndRowsWrittenLaterAreRead) {
  const fs::path dir = fs::temp_directory_path() / ("ctxfold-mapvfs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "m.db").string();
  Db w(path, false);
  w.exec("PRAGMA journal_mode=WAL");
  w.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
  auto put = [&](int from, int to) {
    w.exec("BEGIN");
    for (int i = from; i < to; ++i) {
      auto q = w.prepare("INSERT INTO t(id, b) VALUES (?1, ?2)");
      q.bind(1, std::int64_t{i}).bind_blob(2, blob_of(i));
      q.run();
    }
    w.exec("COMMIT");
  };
  put(0, 200);
  w.exec("PRAGMA wal_checkpoint(TRUNCATE)");  // the rows are in the database file itself

  EXPECT_FALSE(map_whole_file(w.raw()));  // a writer's connection does not use the mapping VFS
  Db r(path, true);
  ASSERT_TRUE(map_whole_file(r.raw()));
  EXPECT_TRUE(map_whole_file(r.raw()));  // already on
  auto check = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      auto q = r.prepare("SELECT b FROM t WHERE id=?1");
      q.bind(1, std::int64_t{i});
      ASSERT_TRUE(q.step()) << i;
      EXPECT_EQ(std::string(q.blob(0)), blob_of(i)) << i;
    }
  };
  check(0, 200);
  put(200, 400);  // the file grows past the mapping (in the WAL, then checkpointed into the file)
  check(0, 400);
  w.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  check(0, 400);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ctxfold
