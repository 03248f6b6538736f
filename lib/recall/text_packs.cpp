#include "recall/text_packs.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "recall/derived_mark.hpp"
#include "recall/grep_detail.hpp"
#include "recall/text_index.hpp"
#include "store/scan.hpp"
#include "util/error.hpp"

namespace ctxfold {

namespace {

/// Code points >= U+0080 whose casefold (CASEFOLD|COMPOSE) holds an ASCII character.
constexpr std::uint32_t kFoldsToAscii[] = {0x00DF, 0x0130, 0x0149, 0x017F, 0x037E, 0x1E9A, 0x1E9E, 0x1FEF,
                                           0x212A, 0xFB00, 0xFB01, 0xFB02, 0xFB03, 0xFB04, 0xFB05, 0xFB06};

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

/// The buffer a pack's text is read into, reused for every pack: anonymous memory aligned to
/// 2 MiB and advised as transparent huge pages (Linux, THP "madvise" mode), so that filling a
/// 4 MiB pack faults two pages in instead of a thousand 4 KiB ones. On short nodes that was a
/// third of a scan's kernel time; where huge pages are off it is ordinary memory.
class PackBuffer {
 public:
  PackBuffer() = default;
  PackBuffer(const PackBuffer&) = delete;
  PackBuffer& operator=(const PackBuffer&) = delete;
  ~PackBuffer() { release(); }
  /// At least n bytes (contents not kept).
  char* get(std::size_t n) {
    if (n <= cap_) return data_;
    release();
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t cap = (n + kHuge - 1) / kHuge * kHuge;
    const std::size_t len = cap + kHuge;  // room to align the start
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    map_ = static_cast<char*>(p);
    map_len_ = len;
    const auto at = reinterpret_cast<std::uintptr_t>(map_);
    data_ = map_ + ((kHuge - at % kHuge) % kHuge);
    cap_ = cap;
#ifdef MADV_HUGEPAGE
    madvise(data_, cap_, MADV_HUGEPAGE);  // advice only: without it the buffer still works
#endif
    return data_;
  }

 private:
  void release() {
    if (map_) munmap(map_, map_len_);
    map_ = data_ = nullptr;
    map_len_ = cap_ = 0;
  }
  char* map_ = nullptr;
  char* data_ = nullptr;
  std::size_t map_len_ = 0, cap_ = 0;
};

}  // namespace

bool any_folds_to_ascii(std::string_view raw) {
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  const std::size_t n = raw.size();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = p[i];
    if (c < 0xC3) continue;
    if (c != 0xC3 && c != 0xC4 && c != 0xC5 && c != 0xCD && c != 0xE1 && c != 0xE2 && c != 0xEF) continue;
    const std::uint32_t cp = grep_detail::cp_at(raw, i);
    for (std::uint32_t s : kFoldsToAscii)
      if (cp == s) return true;
  }
  return false;
}

bool any_cjk_compat(std::string_view raw) {
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  for (std::size_t i = 0; i + 2 < raw.size(); ++i) {
    if (p[i] == 0xEF && p[i + 1] >= 0xA4 && p[i + 1] <= 0xAB) return true;                      // U+F900-FAFF
    if (p[i] == 0xF0 && p[i + 1] == 0xAF && p[i + 2] >= 0xA0 && p[i + 2] <= 0xA8) return true;  // U+2F800-2FA1F
  }
  return false;
}

std::uint8_t text_pack_flags(std::string_view text, bool view) {
  std::uint8_t f = view ? pack_flag::kView : 0;
  bool non_ascii = false;
  for (unsigned char c : text)
    if (c >= 0x80) {
      non_ascii = true;
      break;
    }
  if (non_ascii) {
    f |= pack_flag::kNonAscii;
    if (any_folds_to_ascii(text)) f |= pack_flag::kFoldsToAscii;
    if (any_cjk_compat(text)) f |= pack_flag::kCjkCompat;
  }
  return f;
}

namespace {
constexpr DerivedMark kPackMark{"text_pack_state", "format", "text_pack"};
}  // namespace

std::int64_t text_pack_through(Store& st) {
  Db& db = st.db();
  if (!db.has_schema_object("text_pack_state")) return 0;
  auto mark = read_derived_mark(db, kPackMark);
  if (!mark || mark->second != kTextPackFormat) return 0;
  return mark->first;
}

PackReport update_text_packs(Store& st, std::int64_t min_tail, bool rebuild, std::int64_t pack_bytes) {
  if (st.read_only()) throw Error(Exit::usage, "index.read_only", "the text packs need a writable database");
  Db& db = st.db();
  PackReport rep;
  std::int64_t through = 0;
  {
    Txn t(db);
    through = start_derived_mark(db, kPackMark, kTextPackFormat, rebuild, &rep.repacked);
    t.commit();
  }
  rep.through_seq = through;
  const std::int64_t total = st.max_seq();
  if (total <= through || total - through < min_tail) return rep;

  struct Open {
    std::string text, seqs, ends, flags;
    std::int64_t first = 0, last = 0, n = 0;
  };
  std::unordered_map<std::string, Open> open;
  constexpr std::int64_t kBatchBytes = 64 << 20;
  while (through < total) {
    Txn t(db);
    {
      // Another writer (a concurrent import or append) may have packed past `through` since it was
      // read: continue from the stored mark, read under this transaction's write lock, so that no
      // node is packed twice.
      if (auto mark = read_derived_mark(db, kPackMark)) through = std::max(through, mark->first);
    }
    // A scan (a server fetches it through a cursor): a batch stops at kBatchBytes, so the rows
    // past it are never sent, and those before it are never held all at once.
    auto read = db.prepare_scan("SELECT seq, session, kind, content FROM nodes WHERE seq > ?1 ORDER BY seq");
    read.bind(1, through);
    auto put = db.prepare(
        "INSERT INTO text_pack(session, first_seq, last_seq, nodes, seqs, ends, flags, text) "
        "VALUES (?1,?2,?3,?4,?5,?6,?7,?8)");
    auto flush = [&](const std::string& session, Open& p) {
      if (p.n == 0) return;
      put.bind(1, session).bind(2, p.first).bind(3, p.last).bind(4, p.n);
      put.bind_blob(5, p.seqs).bind_blob(6, p.ends).bind_blob(7, p.flags).bind_blob(8, p.text);
      put.run();
      put.reset();
      ++rep.packs;
      p = Open{};
    };
    std::int64_t bytes = 0;
    std::int64_t last = through;
    while (bytes < kBatchBytes && read.step()) {
      const std::int64_t seq = read.int64(0);
      const std::string session = read.text(1);
      const std::string text = searchable_text(read.view(3), db.path(), seq);
      Open& p = open[session];
      if (p.n == 0) p.first = seq;
      p.last = seq;
      ++p.n;
      p.text += text;
      if (p.text.size() > 0xFFFFFFFFu) throw Error(Exit::internal, "pack.too_large", "a text pack exceeds 4 GiB");
      put_le(p.seqs, static_cast<std::uint64_t>(seq), 8);
      put_le(p.ends, p.text.size(), 4);
      p.flags.push_back(static_cast<char>(text_pack_flags(text, kind::is_view(read.view(2)))));
      if (static_cast<std::int64_t>(p.text.size()) >= pack_bytes) flush(session, p);
      bytes += static_cast<std::int64_t>(text.size()) + 16;
      rep.text_bytes += static_cast<std::int64_t>(text.size());
      ++rep.packed;
      last = seq;
    }
    read.reset();
    for (auto& [session, p] : open) flush(session, p);
    open.clear();
    if (last == through) break;
    through = last;
    advance_derived_mark(db, kPackMark, through);
    t.commit();
  }
  rep.through_seq = through;
  return rep;
}

void for_each_text_pack(Store& st, const std::optional<std::string>& session, std::int64_t after,
                        const std::function<void(const TextPack&)>& fn) {
  Db& db = st.db();
  std::vector<std::int64_t> ids;
  {
    // Ids first: ordering the rows themselves could make SQLite sort whole packs.
    auto q = session ? db.prepare("SELECT id FROM text_pack WHERE session=?1 AND last_seq > ?2 ORDER BY first_seq")
                     : db.prepare("SELECT id FROM text_pack WHERE ?1 = '' AND last_seq > ?2 ORDER BY id");
    q.bind(1, session.value_or("")).bind(2, after);
    while (q.step()) ids.push_back(q.int64(0));
  }
  // Every array of a pack is read into one buffer reused for every pack (PackBuffer), through
  // SQLite's blob handles (store/scan.hpp RowBlobs): a column read would allocate a fresh buffer
  // of the array's size for each row, and on short nodes the page faults of those allocations
  // were most of a scan's time. The row statement stays stepped while the handles read, so all
  // see the same snapshot.
  auto q = db.prepare("SELECT nodes FROM text_pack WHERE id=?1");
  RowBlobs blobs(db, "text_pack", "id", {"text", "seqs", "ends", "flags"});
  std::vector<std::string_view> got;
  PackBuffer buf;
  for (std::int64_t id : ids) {
    q.bind(1, id);
    if (!q.step()) {
      q.reset();
      continue;
    }
    RowBlobs::Found found = RowBlobs::Found::row;
    try {
      found = blobs.read(id, [&](std::size_t total) { return buf.get(total); }, got);
    } catch (const Error& e) {
      if (e.code() != "db.io") throw;
      throw Error(Exit::environment, "pack.read", fmt::format("reading text pack {}: {}", id, e.what()));
    }
    if (found == RowBlobs::Found::no_row) {
      q.reset();
      continue;
    }
    if (found == RowBlobs::Found::not_blob)  // no pack update_text_packs wrote
      throw Error(Exit::bad_input, "pack.corrupt", fmt::format("text pack {} is inconsistent", id),
                  "run `ctxfold index --rebuild`");
    TextPack p;
    const std::int64_t n = q.int64(0);
    p.text = got[0];
    p.seqs = got[1];
    p.ends = got[2];
    p.flag_bytes = got[3];
    p.n = static_cast<std::size_t>(n);
    if (n < 0 || p.seqs.size() != 8 * p.n || p.ends.size() != 4 * p.n || p.flag_bytes.size() != p.n ||
        (p.n > 0 && p.end(p.n - 1) != p.text.size()))
      throw Error(Exit::bad_input, "pack.corrupt", fmt::format("text pack {} is inconsistent", id),
                  "run `ctxfold index --rebuild`");
    for (std::size_t k = 1; k < p.n; ++k)
      if (p.end(k) < p.end(k - 1))
        throw Error(Exit::bad_input, "pack.corrupt", fmt::format("text pack {} is inconsistent", id),
                    "run `ctxfold index --rebuild`");
    fn(p);
    q.reset();
  }
}

}  // namespace ctxfold
