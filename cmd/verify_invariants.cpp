#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>

#include <algorithm>

#include "context.hpp"
#include "progress.hpp"
#include "invariants/report.hpp"
#include "invariants/verify.hpp"
#include "util/error.hpp"
#include "session/open.hpp"
#include "store/scan.hpp"

namespace ctxfold::cli {

namespace {

constexpr const char* kHelp = R"HELP(Checks the invariants I1-I11 over session databases, read-only:
I1 append-only ledger, I2 well-formed DAG, I3 summary coverage, I4 one active rolling summary,
I5 render completeness, I6 HEAD integrity, I7 compaction bookkeeping, I8 lcm summary tree,
I9 fork closure, I10 determinism, I11 SQLite integrity. Each check's "source" names the section
of docs/invariants.md (in the source tree) that states the rule.

Databases: the positional DB arguments (several in one call), or the global --db when none is
given. Sessions: --session (or the default session) of each database, or every session with
--all-sessions.

Output (stdout):
  json (default)  one JSON document per database, one line each: a single database gives the
                  usual {"schema":"ctxfold.verify/1","db","ok","sessions","checks":[{"id","name",
                  "source","ok","violations","warnings"}]}; several databases give JSON Lines in
                  argument order. A database that cannot be verified gives
                  {"schema":"ctxfold.verify/1","db","ok":false,"error":{"code","message","exit"}}.
  junit           one JUnit XML document: a <testsuite name="DB path"> per database and a
                  <testcase classname="SESSION" name="I3 summary coverage"> per invariant per
                  session; database-wide checks (I11, I1's seq continuity) use classname
                  "(database)"; a database that cannot be opened is one testcase with <error>.
  --text          a human view.

--quick runs only the cheap structural checks: I1 without recomputing node digests (seq
continuity and order, coverage rows), I2, I3, I6, I7 and I11 with PRAGMA quick_check instead of
integrity_check. The render-based I4, I5, I9 and I10 are reported as skipped.

Exit: 0 every invariant holds; 1 violations; 3 not a ctxfold database, a newer schema than this
binary, or a corrupt/truncated file; 4 cannot open (missing file, I/O) or locked by a writer
(after a 5 s busy wait). With several databases the highest of these codes is the exit code.)HELP";

struct VerifyCliOptions {
  bool all_sessions = false;
  bool quick = false;
  std::string format = "json";
  std::vector<std::string> dbs;
};

struct Outcome {
  VerifiedDb db;
  int exit = 0;
  std::optional<Error> error;
};

Outcome verify_one(Context& ctx, const std::string& path, const VerifyCliOptions& o) {
  Outcome out;
  out.db.path = shown_database(path);  // a server URL without its password
  try {
    Store st = open_store(path, Store::Mode::read_only);
    std::vector<std::string> sessions;
    if (o.all_sessions) {
      for (const auto& s : st.sessions()) sessions.push_back(s.id);
    } else {
      sessions.push_back(st.resolve_session(ctx.session));
    }
    VerifyOptions vo;
    vo.quick = o.quick;
    vo.env = ctx.env;
    vo.database = path;
    Progress bar("verify " + database_label(path));
    if (bar.active())
      vo.progress = [&](const std::string& phase, std::int64_t done, std::int64_t total) {
        bar.update(done, total, phase);
      };
    out.db.report = verify_invariants(st, sessions, vo);
    bar.finish();
    out.exit = out.db.report.ok ? 0 : 1;
  } catch (const Error& e) {
    out.error = e;
    out.db.error = e.what();
    out.db.error_code = e.code();
    out.exit = static_cast<int>(e.exit());
    out.db.report.ok = false;
  }
  return out;
}

Json error_json(const Outcome& r) {
  return Json{{"schema", "ctxfold.verify/1"},
              {"db", r.db.path},
              {"ok", false},
              {"error", {{"code", r.error->code()}, {"message", r.error->what()}, {"exit", r.exit}}}};
}

int run_verify(Context& ctx, const VerifyCliOptions& o) {
  std::vector<std::string> paths = o.dbs.empty() ? std::vector<std::string>{ctx.db_path} : o.dbs;
  std::vector<Outcome> results;
  int worst = 0;
  for (const auto& p : paths) {
    results.push_back(verify_one(ctx, p, o));
    const Outcome& r = results.back();
    if (r.error) {
      fmt::print(stderr, "ctxfold: error: {}: {}\n", r.db.path, r.error->what());
      if (!r.error->hint().empty()) fmt::print(stderr, "hint: {}\n", r.error->hint());
    }
    worst = std::max(worst, r.exit);
  }

  if (o.format == "junit") {
    std::vector<VerifiedDb> dbs;
    for (const auto& r : results) dbs.push_back(r.db);
    emit_text(verify_to_junit(dbs));
    return worst;
  }

  for (const auto& r : results) {
    if (ctx.text) {
      emit_text(verify_to_text(r.db, colour_wanted(STDOUT_FILENO)));
    } else if (r.error) {
      emit(error_json(r));
    } else {
      Json j = verify_to_json(r.db.report);
      j["db"] = r.db.path;
      emit(j);
    }
  }
  return worst;
}
}  // namespace

std::function<int(Context&)> setup_verify(CLI::App& sub) {
  auto o = std::make_shared<VerifyCliOptions>();
  sub.footer(kHelp);
  sub.add_option("DB", o->dbs, "session database files to verify (default: the global --db)");
  sub.add_flag("--all-sessions", o->all_sessions, "check every session of each database");
  sub.add_flag("--quick", o->quick, "only the cheap structural checks (no renders, no digest recomputation)");
  sub.add_option("--format", o->format, "json (default, one line per database) or junit")
      ->check(CLI::IsMember({"json", "junit"}));
  return [o](Context& ctx) { return run_verify(ctx, *o); };
}

}  // namespace ctxfold::cli
