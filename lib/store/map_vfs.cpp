#include "store/map_vfs.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace ctxfold {

namespace {

/// A file control opcode of this VFS (SQLite leaves opcodes it does not know to the VFS).
constexpr int kMapWholeFile = 0x43464D31;  // "CFM1"
constexpr int kReadAhead = 0x43464D32;    // "CFM2": argument int* (1 on, 0 off)

/// Bytes one read-ahead pread(2) fetches: small enough to stay in a core's L2 cache, from where
/// SQLite's page reads copy it, large enough that a sequential scan makes one system call per
/// 16 pages of 4 KiB.
constexpr int kAheadBytes = 64 << 10;
sqlite3_vfs g_vfs;
sqlite3_vfs* g_real = nullptr;

struct MapFile {
  sqlite3_file base;          // pMethods: kMethods
  sqlite3_file* real;         // the wrapped file, stored right after this struct
  const char* path;           // SQLite keeps the name valid until xClose
  bool main_db;
  const char* map;
  sqlite3_int64 map_size;
  // Read-ahead (read_ahead()): the file's bytes [ahead_off, ahead_off + ahead_len) as read by one
  // pread(2) of the descriptor ahead_fd into `ahead`; ahead_next is where a read continuing the
  // previous one would start.
  char* ahead;
  int ahead_fd;
  sqlite3_int64 ahead_off, ahead_len, ahead_next;
};

constexpr std::size_t kRealOffset = (sizeof(MapFile) + 15) / 16 * 16;

MapFile* self(sqlite3_file* f) { return reinterpret_cast<MapFile*>(f); }
sqlite3_file* real(sqlite3_file* f) { return self(f)->real; }

/// A read-only descriptor of the file at `path`, opened once per file (device and inode) and never
/// closed while the process lives; -1 when it cannot be opened. Why never closed: POSIX record
/// locks belong to the process and the file, and closing any descriptor of a file drops every lock
/// the process holds on it. Closing the descriptor a mapping was made from would drop the SHARED
/// lock of every other connection of this process to the database (a read-only store's read
/// transaction among them); a writer in another process could then take the database's EXCLUSIVE
/// lock, checkpoint the whole WAL into the file and delete it under that reader, whose snapshot
/// would then mix old and new pages. SQLite's own unix VFS keeps such descriptors open for the
/// same reason. The set is bounded by the number of distinct database files mapped.
int kept_descriptor(const char* path) {
  static std::mutex mu;
  struct Kept {
    dev_t dev;
    ino_t ino;
    int fd;
  };
  static std::vector<Kept> kept;
  std::lock_guard<std::mutex> lock(mu);
  struct stat st {};
  if (::stat(path, &st) == 0)
    for (const Kept& k : kept)
      if (k.dev == st.st_dev && k.ino == st.st_ino) return k.fd;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  // Kept even when fstat fails or the path now names another file: closing it would drop the locks.
  if (fstat(fd, &st) == 0) kept.push_back({st.st_dev, st.st_ino, fd});
  return fd;
}

/// Forgets the read-ahead bytes (kept from one lock state to the next, they could be stale).
void drop_ahead(MapFile* m) {
  m->ahead_len = 0;
  m->ahead_next = -1;
}

void stop_ahead(MapFile* m) {
  std::free(m->ahead);
  m->ahead = nullptr;
  drop_ahead(m);
}

/// A read served from the read-ahead bytes: true when [off, off + amt) is (now) among them.
/// A read that does not continue the previous one is left to the wrapped file (random page reads
/// would fetch 16 times what they use); one that does starts a fresh read-ahead there.
bool read_ahead_hit(MapFile* m, void* buf, int amt, sqlite3_int64 off) {
  if (off < 0 || amt <= 0 || amt > kAheadBytes) return false;
  const bool held = off >= m->ahead_off && off + amt <= m->ahead_off + m->ahead_len;
  if (!held && off == m->ahead_next) {
    const ssize_t got = ::pread(m->ahead_fd, m->ahead, kAheadBytes, off);
    m->ahead_off = off;
    m->ahead_len = got > 0 ? got : 0;
  }
  m->ahead_next = off + amt;
  if (off < m->ahead_off || off + amt > m->ahead_off + m->ahead_len) return false;  // short: past the end
  std::memcpy(buf, m->ahead + (off - m->ahead_off), static_cast<std::size_t>(amt));
  return true;
}

int x_close(sqlite3_file* f) {
  MapFile* m = self(f);
  stop_ahead(m);
  if (m->map) munmap(const_cast<char*>(m->map), static_cast<std::size_t>(m->map_size));
  m->map = nullptr;
  return real(f)->pMethods->xClose(real(f));
}
int x_read(sqlite3_file* f, void* buf, int amt, sqlite3_int64 off) {
  MapFile* m = self(f);
  if (m->ahead && read_ahead_hit(m, buf, amt, off)) return SQLITE_OK;
  if (m->map && off >= 0 && off + amt <= m->map_size) {
    std::memcpy(buf, m->map + off, static_cast<std::size_t>(amt));
    return SQLITE_OK;
  }
  return real(f)->pMethods->xRead(real(f), buf, amt, off);
}
int x_write(sqlite3_file* f, const void* b, int amt, sqlite3_int64 off) {
  drop_ahead(self(f));
  return real(f)->pMethods->xWrite(real(f), b, amt, off);
}
int x_truncate(sqlite3_file* f, sqlite3_int64 size) {
  MapFile* m = self(f);
  drop_ahead(m);
  if (m->map && size < m->map_size) {  // never read past the end through the old mapping
    munmap(const_cast<char*>(m->map), static_cast<std::size_t>(m->map_size));
    m->map = nullptr;
    m->map_size = 0;
  }
  return real(f)->pMethods->xTruncate(real(f), size);
}
int x_sync(sqlite3_file* f, int flags) { return real(f)->pMethods->xSync(real(f), flags); }
int x_file_size(sqlite3_file* f, sqlite3_int64* size) { return real(f)->pMethods->xFileSize(real(f), size); }
// Any change of lock may end the transaction the read-ahead bytes were read in.
int x_lock(sqlite3_file* f, int l) {
  drop_ahead(self(f));
  return real(f)->pMethods->xLock(real(f), l);
}
int x_unlock(sqlite3_file* f, int l) {
  drop_ahead(self(f));
  return real(f)->pMethods->xUnlock(real(f), l);
}
int x_check_reserved(sqlite3_file* f, int* out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); }
int x_file_control(sqlite3_file* f, int op, void* arg) {
  MapFile* m = self(f);
  if (op == kMapWholeFile) {
    if (!m->main_db || !m->path) return SQLITE_NOTFOUND;
    if (m->map) return SQLITE_OK;
    const int fd = kept_descriptor(m->path);
    if (fd < 0) return SQLITE_IOERR;
    struct stat st {};
    void* p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > 0)
      p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return SQLITE_IOERR;
    m->map = static_cast<const char*>(p);
    m->map_size = st.st_size;
    return SQLITE_OK;
  }
  if (op == kReadAhead) {
    if (!m->main_db || !m->path) return SQLITE_NOTFOUND;
    if (!*static_cast<int*>(arg)) {
      stop_ahead(m);
      return SQLITE_OK;
    }
    if (m->ahead) return SQLITE_OK;
    m->ahead_fd = kept_descriptor(m->path);
    if (m->ahead_fd < 0) return SQLITE_IOERR;
    m->ahead = static_cast<char*>(std::malloc(kAheadBytes));
    if (!m->ahead) return SQLITE_NOMEM;
    m->ahead_off = 0;
    drop_ahead(m);
    return SQLITE_OK;
  }
  return real(f)->pMethods->xFileControl(real(f), op, arg);
}
int x_sector_size(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int x_device_characteristics(sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
int x_shm_map(sqlite3_file* f, int pg, int sz, int extend, void volatile** p) {
  return real(f)->pMethods->xShmMap(real(f), pg, sz, extend, p);
}
int x_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  drop_ahead(self(f));  // a WAL read transaction begins and ends with one
  return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void x_shm_barrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int x_shm_unmap(sqlite3_file* f, int del) { return real(f)->pMethods->xShmUnmap(real(f), del); }
int x_fetch(sqlite3_file* f, sqlite3_int64 off, int amt, void** pp) {
  return real(f)->pMethods->xFetch(real(f), off, amt, pp);
}
int x_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) { return real(f)->pMethods->xUnfetch(real(f), off, p); }

// One table per iVersion the wrapped file may have: SQLite calls the xShm* (version 2) and
// xFetch (version 3) members only when the version says they exist.
sqlite3_io_methods make_methods(int version) {
  sqlite3_io_methods m{};
  m.iVersion = version;
  m.xClose = x_close;
  m.xRead = x_read;
  m.xWrite = x_write;
  m.xTruncate = x_truncate;
  m.xSync = x_sync;
  m.xFileSize = x_file_size;
  m.xLock = x_lock;
  m.xUnlock = x_unlock;
  m.xCheckReservedLock = x_check_reserved;
  m.xFileControl = x_file_control;
  m.xSectorSize = x_sector_size;
  m.xDeviceCharacteristics = x_device_characteristics;
  if (version >= 2) {
    m.xShmMap = x_shm_map;
    m.xShmLock = x_shm_lock;
    m.xShmBarrier = x_shm_barrier;
    m.xShmUnmap = x_shm_unmap;
  }
  if (version >= 3) {
    m.xFetch = x_fetch;
    m.xUnfetch = x_unfetch;
  }
  return m;
}
const sqlite3_io_methods kMethods[3] = {make_methods(1), make_methods(2), make_methods(3)};

int x_open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  MapFile* m = self(f);
  m->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(f) + kRealOffset);
  m->path = name;
  m->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
  m->map = nullptr;
  m->map_size = 0;
  m->ahead = nullptr;
  m->ahead_fd = -1;
  m->ahead_off = m->ahead_len = 0;
  m->ahead_next = -1;
  m->base.pMethods = nullptr;
  const int rc = g_real->xOpen(g_real, name, m->real, flags, out_flags);
  if (m->real->pMethods) {
    const int v = m->real->pMethods->iVersion;
    m->base.pMethods = &kMethods[(v < 1 ? 1 : v > 3 ? 3 : v) - 1];
  }
  return rc;
}

}  // namespace

const char* map_vfs_name() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    g_real = sqlite3_vfs_find(nullptr);
    if (!g_real) return;
    g_vfs = *g_real;  // the wrapped VFS's own functions for everything but files
    g_vfs.zName = "ctxfold-map";
    g_vfs.szOsFile = static_cast<int>(kRealOffset) + g_real->szOsFile;
    g_vfs.pNext = nullptr;
    g_vfs.xOpen = x_open;
    ok = sqlite3_vfs_register(&g_vfs, 0) == SQLITE_OK;
  });
  return ok ? "ctxfold-map" : nullptr;
}

bool map_whole_file(sqlite3* db) {
  return sqlite3_file_control(db, "main", kMapWholeFile, nullptr) == SQLITE_OK;
}

bool read_ahead(sqlite3* db, bool on) {
  int arg = on ? 1 : 0;
  return sqlite3_file_control(db, "main", kReadAhead, &arg) == SQLITE_OK;
}

}  // namespace ctxfold
