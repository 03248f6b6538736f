// sync --to DB | --from DB: copies the ledger rows the other database lacks, SQLite or PostgreSQL on
// either side (docs/backends.md "sync"); --db is the local side.
#include <fmt/format.h>

#include "context.hpp"
#include "recall/text_packs.hpp"
#include "session/open.hpp"
#include "store/sync.hpp"
#include "util/error.hpp"

namespace ctxfold::cli {

namespace {
struct SyncCliOptions {
  std::string to;
  std::string from;
  std::int64_t batch = 2000;
};

Json synced_to_json(const SyncedSession& s) {
  return Json{{"id", s.id},         {"state", s.state},          {"ancestor", s.ancestor},
              {"nodes", s.nodes},   {"head_moves", s.head_moves}, {"events", s.events},
              {"source_records", s.source_records}};
}

int run_sync(Context& ctx, const SyncCliOptions& o) {
  const bool push = !o.to.empty();
  const std::string other = push ? o.to : o.from;
  if (same_database(ctx.db_path, other))
    throw Error(Exit::usage, "usage.sync", fmt::format("sync copies between two databases; '{}' is --db itself", other));
  // The side this command did not open: the destination of a push (created and migrated when
  // new), or the source of a pull (read in one snapshot).
  const bool new_file = push && is_new_database_file(other);
  Store remote = open_store(other, push ? Store::Mode::read_write : Store::Mode::read_only);
  // A bulk writer checks the whole file first (docs/commands.md "Damaged databases").
  if (push && !new_file) check_integrity(remote);
  Store& from = push ? ctx.db() : remote;
  Store& to = push ? remote : ctx.db();
  SyncOptions opts;
  if (ctx.session) opts.sessions.push_back(*ctx.session);
  opts.batch_nodes = o.batch;
  Environment* env = ctx.env;
  opts.after_commit = [env] { env->crash_point("sync_after_batch"); };
  SyncResult r = sync_stores(from, to, opts);
  // grep scans the packed text, as after an import; also when this run copied nothing but the
  // packs lag, as after a sync killed between its last commit and the packing.
  if (r.nodes > 0 || text_pack_through(to) < to.max_seq()) update_text_packs(to);
  Json sessions = Json::array();
  for (const auto& s : r.sessions) sessions.push_back(synced_to_json(s));
  if (ctx.text) {
    std::string out;
    for (const auto& s : r.sessions)
      out += fmt::format("{:<40} {:<18} {} nodes, {} HEAD moves, {} events, {} source records{}\n", s.id, s.state,
                         s.nodes, s.head_moves, s.events, s.source_records, s.ancestor ? " (ancestor)" : "");
    out += fmt::format("{} -> {}: {} nodes in {} commits, {} digests checked\n", from.path(), to.path(), r.nodes,
                       r.commits, r.digests_checked);
    emit_text(out);
    return 0;
  }
  emit(Json{{"schema", "ctxfold.sync/1"},
            {"from", from.path()},
            {"to", to.path()},
            {"sessions", std::move(sessions)},
            {"nodes", r.nodes},
            {"head_moves", r.head_moves},
            {"events", r.events},
            {"source_records", r.source_records},
            {"commits", r.commits},
            {"digests_checked", r.digests_checked}});
  return 0;
}
}  // namespace

Runner setup_sync(CLI::App& sub) {
  auto o = std::make_shared<SyncCliOptions>();
  auto* to = sub.add_option("--to", o->to, "push: copy --db's sessions into this database (a path or a postgresql:// URL)")
                  ->type_name("DB");
  auto* from = sub.add_option("--from", o->from, "pull: copy this database's sessions into --db")->type_name("DB");
  to->excludes(from);
  sub.add_option("--batch", o->batch, "commit after at least N nodes, at a point where the source had committed (default 2000)")
      ->type_name("N")
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 40));
  return Runner(
      [o](Context& ctx) {
        if (o->to.empty() && o->from.empty())
          throw Error(Exit::usage, "usage.sync", "sync needs --to DB (push --db there) or --from DB (pull it into --db)");
        return run_sync(ctx, *o);
      },
      [o] { return o->to.empty() ? Needs::read_write : Needs::read_only; });
}

}  // namespace ctxfold::cli
