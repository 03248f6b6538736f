#include "invariants/verify.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <map>
#include <thread>

#include "invariants/catalog.hpp"
#include "invariants/checks.hpp"
#include "invariants/verify_compaction.hpp"
#include "invariants/verify_fork.hpp"
#include "invariants/verify_lcm.hpp"
#include "store/node_cache.hpp"
#include "store/scan.hpp"

// The scheduler of verify-invariants: which checks run, in which thread, and the profile. The
// checks themselves: ledger.cpp (I1, I2), verify_compaction.cpp (I3, I4, I7), render_checks.cpp
// (I5, I10), head.cpp (I6), verify_lcm.cpp (I8), verify_fork.cpp (I9), sqlite_checks.cpp (I11).

namespace ctxfold {
namespace {

using namespace verify_detail;

/// Stored bytes of parsed nodes verify keeps per session for its repeated renders (Store node
/// cache): 8 MiB of JSON text, some tens of MB parsed, under the 64 MB peak-RSS target (issue 6).
constexpr std::size_t kVerifyNodeCacheBytes = 8u << 20;

/// CPU seconds of the calling thread spent per check, printed to stderr when on. I11 on its own
/// thread is timed there (the "I11" lap in the main thread is the wait for it).
struct Profile {
  Environment* env = nullptr;  ///< where the figures go (diagnostics); null: no profile
  bool on = false;
  bool rss = false;
  double last = 0;
  std::map<std::string, double> seconds;
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  void lap(const char* id) {
    if (!on) return;
    double t = now();
    if (std::string(id) != "-") seconds[id] += t - last;
    last = t;
    if (rss) {
      std::FILE* f = std::fopen("/proc/self/status", "r");
      char line[256];
      while (f && std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmHWM:", 6) == 0) {
          std::string_view text(line);
          while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
          env->diagnostic(fmt::format("after {}: {}", id, text));
        }
      if (f) std::fclose(f);
    }
  }
  void print() const {
    if (!on) return;
    for (const auto& [id, sec] : seconds) env->diagnostic(fmt::format("verify profile: {} {:.2f} s CPU", id, sec));
  }
};

/// A check --quick leaves out (needs_render in kInvariants), reported as skipped.
Check skipped_check(const char* id) {
  Check c = make_check(id);
  c.skipped = true;
  c.skipped_reason = "--quick: render-based check not run";
  return c;
}

/// The checks verify_invariants fills; the database-wide ones (I3, I7, I8, I11) may be filled by
/// the second thread.
struct Checks {
  Check i1 = make_check("I1");
  Check i2 = make_check("I2");
  Check i4 = make_check("I4");  // per session in the loop, then the chain
  Check i5 = make_check("I5");
  Check i6 = make_check("I6");
  Check i10 = make_check("I10");
  Check i11 = make_check("I11");
  Check i3, i7, i8, i9;
};

/// The database-wide checks that read through their own statements (I11, I3, I7, I8) over st;
/// cpu receives the CPU seconds of each.
void check_db_wide(Store& st, const std::vector<std::string>& sessions, bool quick, bool profile, Checks& k,
                   std::map<std::string, double>& cpu) {
  Profile p;
  p.on = profile;
  p.lap("-");
  check_sqlite(st, k.i11, quick);
  p.lap("I11");
  CoveredTokensBySummary covered;  // I3's pass over the covered rows sums what I7 compares
  k.i3 = check_summary_coverage(st, sessions, &covered);
  p.lap("I3");
  k.i7 = check_compaction_log(st, sessions, &covered);
  p.lap("I7");
  k.i8 = check_lcm_tree(st, sessions);
  p.lap("I8");
  cpu = p.seconds;
}

/// The per-session checks of session s: I1, I2, I6 and, unless quick, I5, I10 and I4's
/// per-session part. An unknown session is an I6 violation.
void check_session(Store& store, const std::string& s, bool quick, Checks& k, Profile& prof,
                   std::optional<NodeCacheScope>& node_cache) {
  if (!store.session(s)) {
    add(k.i6, s, {}, fmt::format("session '{}' does not exist", s));
    return;
  }
  Chain chain;
  check_ledger(store, s, k.i1, k.i2, chain, !quick);
  prof.lap("I1 I2");
  check_head(store, s, k.i6);
  prof.lap("I6");
  if (quick) return;
  // One render of HEAD serves I5, I10 and I4; the node cache lets I10's second render and its
  // predecessor's render reuse the parsed nodes (bounded: kVerifyNodeCacheBytes). One whole
  // render at a time: HEAD's is slimmed to its digests once I5 has read it.
  node_cache->clear();
  std::optional<HeadRender> hr;
  if (auto head = store.head(s)) {  // no HEAD: I6 reports a session with nodes and none
    hr = render_head(store, s, *head, k.i5, StrategyLabel::rolling);
    if (hr) {
      check_render(store, s, chain, k.i5, *hr);
      hr->slim();
    }
    if (!store.summary_ranges(s, StrategyLabel::lcm).empty())
      if (auto lr = render_head(store, s, *head, k.i5, StrategyLabel::lcm, false))
        check_render(store, s, chain, k.i5, *lr, StrategyLabel::lcm);
    prof.lap("I5");
    if (hr) check_determinism(store, s, *head, *hr, k.i10);
    prof.lap("I10");
  }
  check_active_summary(store, s, k.i4, hr ? &hr->r : nullptr);  // renders HEAD itself when that failed
  prof.lap("I4");
}

}  // namespace

VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions) {
  return verify_invariants(store, sessions, VerifyOptions{});
}

VerifyReport verify_invariants(Store& store, const std::vector<std::string>& sessions, const VerifyOptions& opts) {
  VerifyReport report;
  report.sessions = sessions;
  report.quick = opts.quick;
  Checks k;

  // CTXFOLD_VERIFY_PROFILE=1: CPU seconds per check on stderr (bench/verify.sh, bench/README.md).
  Profile prof;
  prof.env = opts.env;
  prof.on = opts.env && opts.env->variable("CTXFOLD_VERIFY_PROFILE");
  prof.rss = prof.on && opts.env->variable("CTXFOLD_VERIFY_PROFILE_RSS");
  prof.lap("-");
  auto step = [&](const std::string& phase, std::int64_t done, std::int64_t total) {
    if (opts.progress) opts.progress(phase, done, total);
  };
  const std::int64_t n_sessions = static_cast<std::int64_t>(sessions.size());
  std::int64_t done_sessions = 0;
  step("sessions", 0, n_sessions);
  // The database-wide checks that read through their own statements (I11 reads every page of the
  // file; I3, I7 and I8 stream the covers rows and the event log) share nothing with the
  // per-session checks: on a database file they run on a second read-only connection in a second
  // thread, beside the per-session checks (2 cores: verify's time is then about the longer of the
  // two, bench/verify.sh). Each thread records its own CPU seconds per check.
  std::map<std::string, double> wide_cpu;
  auto db_wide = [&](Store& st) { check_db_wide(st, sessions, opts.quick, prof.on, k, wide_cpu); };
  std::thread wide_thread;
  std::exception_ptr wide_error;
  const bool apart = store.path() != ":memory:" && !store.path().empty();
  const std::string snapshot = apart ? export_read_snapshot(store.db()) : std::string();
  if (apart)
    wide_thread = std::thread([&] {
      try {
        Store own = Store::open(opts.database.empty() ? store.path() : opts.database, Store::Mode::read_only,
                                store.token_measure());
        import_read_snapshot(own.db(), snapshot);  // a server: the state the first thread reads
        read_for_scan(own.db());  // store/scan.hpp: read ahead into a bounded page cache, not a map
        db_wide(own);
      } catch (...) {
        wide_error = std::current_exception();
      }
    });
  struct JoinOnExit {
    std::thread& t;
    ~JoinOnExit() {
      if (t.joinable()) t.join();
    }
  } join_wide{wide_thread};
  std::optional<NodeCacheScope> node_cache;
  if (!opts.quick) node_cache.emplace(store, kVerifyNodeCacheBytes);
  check_seq_continuity(store, k.i1);
  prof.lap("I1");
  for (const auto& s : sessions) {
    step("sessions", done_sessions++, n_sessions);
    check_session(store, s, opts.quick, k, prof, node_cache);
  }
  node_cache.reset();
  step("I3 I4 I7 I8 I9 I11", n_sessions, n_sessions);
  if (opts.quick)
    k.i4 = skipped_check("I4");
  else
    check_supersession(store, sessions, k.i4);
  prof.lap("I4");
  k.i9 = opts.quick ? skipped_check("I9") : check_fork_closure(store, sessions);
  prof.lap("I9");
  if (apart) {
    wide_thread.join();
    if (wide_error) std::rethrow_exception(wide_error);
    prof.lap("wait for the second thread");
  } else {
    db_wide(store);
  }
  for (const auto& [id, sec] : wide_cpu) prof.seconds[apart ? id + " (second thread)" : id] += sec;
  prof.print();
  if (opts.quick) {
    k.i5 = skipped_check("I5");
    k.i10 = skipped_check("I10");
  }

  for (Check* c : {&k.i1, &k.i2, &k.i3, &k.i4, &k.i5, &k.i6, &k.i7, &k.i8, &k.i9, &k.i10, &k.i11}) {
    c->ok = c->violations.empty();
    if (c->source.empty()) c->source = invariant_source(c->id);
    report.ok = report.ok && c->ok;
    report.checks.push_back(std::move(*c));
  }
  return report;
}

}  // namespace ctxfold
