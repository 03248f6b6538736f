// The whole-file mapping and the read-ahead of read-only connections (lib/store/map_vfs.hpp):
// reads through them give the bytes pread gives, pages written after the mapping are still read
// (past its end), read-ahead bytes never outlive their transaction, and only read-only
// connections can turn either on.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
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

/// A new database `name` in a fresh folder of the temporary directory, in WAL mode, with the
/// table t(id, b); returns its path (the folder is the caller's to remove).
std::string new_wal_table(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ctxfold-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "m.db").string();
  Db w(path, false);
  w.exec("PRAGMA journal_mode=WAL");
  w.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
  return path;
}

TEST(MapVfsTest, MappedReadsEqualTheStoredBytesAndRowsWrittenLaterAreRead) {
  const std::string path = new_wal_table("mapvfs");
  const fs::path dir = fs::path(path).parent_path();
  Db w(path, false);
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

// Read-ahead (read_ahead): reads give the stored bytes, and bytes read ahead in one read
// transaction are never served in the next one: rows a writer rewrites in place and checkpoints
// into the file between two reads are read anew (the same pages, the same offsets).
TEST(MapVfsTest, ReadAheadGivesTheStoredBytesAndForgetsThemBetweenTransactions) {
  const std::string path = new_wal_table("ahead");
  const fs::path dir = fs::path(path).parent_path();
  Db w(path, false);
  auto put = [&](int shift) {
    w.exec("BEGIN");
    for (int i = 0; i < 200; ++i) {
      auto q = w.prepare("INSERT OR REPLACE INTO t(id, b) VALUES (?1, ?2)");
      q.bind(1, std::int64_t{i}).bind_blob(2, blob_of(i + shift));
      q.run();
    }
    w.exec("COMMIT");
    w.exec("PRAGMA wal_checkpoint(TRUNCATE)");  // into the file itself: reads come from there
  };
  put(0);
  EXPECT_FALSE(read_ahead(w.raw(), true));  // a writer's connection does not use the VFS
  Db r(path, true);
  r.exec("PRAGMA cache_size=4");  // pages come from the file, not from the page cache
  ASSERT_TRUE(read_ahead(r.raw(), true));
  EXPECT_TRUE(read_ahead(r.raw(), true));  // already on
  auto check = [&](int shift) {
    r.exec("BEGIN");
    auto q = r.prepare("SELECT id, b FROM t ORDER BY id");  // a sequential scan: read ahead
    int n = 0;
    while (q.step()) {
      const int i = static_cast<int>(q.int64(0));
      EXPECT_EQ(std::string(q.blob(1)), blob_of(i + shift)) << i;
      ++n;
    }
    EXPECT_EQ(n, 200);
    q.reset();
    r.exec("COMMIT");
  };
  check(0);
  for (int shift : {1, 2, 3}) {
    put(shift);  // the same rows, new bytes, in the same pages of the file
    check(shift);
  }
  EXPECT_TRUE(read_ahead(r.raw(), false));
  check(3);
  fs::remove_all(dir);
}

/// Whether another process sees a read lock on the SHARED range of the database file at `path`
/// (SQLite's unix locking: 510 bytes from PENDING_BYTE + 2). Asked from a child process: F_GETLK
/// reports no conflict with the asking process's own locks.
bool another_process_sees_a_shared_lock(const std::string& path) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0x40000000 + 2;
    fl.l_len = 510;
    const bool held = fd >= 0 && ::fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_RDLCK;
    ::_exit(held ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A reader's read transaction holds a SHARED lock on the database file; turning the mapping on
// for a second connection of the same process must not drop it (closing a descriptor of the file
// drops every lock of the process on it). Without the lock a writer in another process may
// checkpoint the WAL into the file and delete it under the reader (docs/commands.md "Reading never
// writes": every read command reads one snapshot).
TEST(MapVfsTest, MappingForASecondConnectionKeepsTheFirstConnectionsReadLock) {
  const std::string path = new_wal_table("mapvfs-lock");
  const fs::path dir = fs::path(path).parent_path();
  Db(path, false).exec("INSERT INTO t(id, b) VALUES (1, 'x')");
  Db keep_wal(path, false);  // a writer's open connection keeps the WAL: readers open read-only
  keep_wal.exec("INSERT INTO t(id, b) VALUES (2, 'y')");
  Db reader(path, true);
  reader.exec("BEGIN");
  {
    auto q = reader.prepare("SELECT count(*) FROM t");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), 2);
  }
  ASSERT_TRUE(another_process_sees_a_shared_lock(path));  // the test's own premise
  for (int i = 0; i < 3; ++i) {
    Db scan(path, true);
    ASSERT_TRUE(map_whole_file(scan.raw()));
    auto q = scan.prepare("SELECT count(*) FROM t");
    ASSERT_TRUE(q.step());
  }
  EXPECT_TRUE(another_process_sees_a_shared_lock(path));
  reader.exec("ROLLBACK");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ctxfold
