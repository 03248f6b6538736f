#pragma once
#include <sqlite3.h>

namespace ctxfold {

/// Name of an SQLite VFS (registered on the first call, not as the default) that wraps the
/// default one and passes every call through, except reads of a main database file whose
/// whole-file mapping map_whole_file() turned on: those are copied from one read-only shared
/// mapping of the file (mmap(2)) instead of one pread(2) per page. Why: this SQLite caps its own
/// memory map at SQLITE_MAX_MMAP_SIZE (2 GB in Debian's build), so a scan of a larger database
/// made one system call per 4 KiB page (131,889 of them for the 512 MB of text packs of the
/// 526 MB grep benchmark corpus). Read-only connections are opened with it (lib/store/db.cpp).
const char* map_vfs_name();

/// Turns the whole-file mapping on for the main database of `db` (opened with map_vfs_name()):
/// the file as it is now is mapped, and reads inside that size come from the mapping from then on
/// (pages past it, written later, are still read with pread). The kernel's page cache backs both,
/// so the bytes are the same. Returns false (and changes nothing) when the connection does not
/// use this VFS or the mapping fails; reads then go on as before. Meant for read-only scans: like
/// SQLite's own mmap, a file truncated by another process while mapped would fault on access.
bool map_whole_file(sqlite3* db);

/// Turns read-ahead on or off for the main database of `db` (opened with map_vfs_name()). While
/// on, a page read that continues the previous read (the next pages of a table or of a text pack's
/// overflow chain) fetches the next 64 KiB with one pread(2) into a buffer and later reads inside
/// it are copied from there; other reads go on as before. For a scan with SQLite's own memory map
/// off: on the benchmark's virtual machine a first touch of a mapped page cost ~2 us, a 64 KiB
/// pread into a cache-resident buffer ~15 us (bench/README.md "Cold grep: page faults, not
/// bytes"). The bytes are forgotten at every change of lock (the start and end of a read
/// transaction), so they never outlive the snapshot they were read in. Returns false (nothing
/// changes) for a connection not using this VFS.
bool read_ahead(sqlite3* db, bool on);

}  // namespace ctxfold
