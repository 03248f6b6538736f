#include "as_of.hpp"

#include <iostream>
#include <sstream>

#include "session/snapshot.hpp"

namespace ctxfold::cli {

namespace {
SnapshotRef read_ref(const std::string& arg) {
  std::string in;
  if (arg == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    in = ss.str();
  }
  return parse_as_of_arg(arg, in);
}
}  // namespace

void AsOfOption::add_to(CLI::App& sub, const std::string& what) {
  sub.add_option("--as-of", arg_,
                 what + " at this append boundary: a seq (a snapshot's boundary_seq), or - to read a snapshot "
                        "JSON (ctxfold snapshot) on stdin")
      ->type_name("SEQ|-");
}

std::int64_t AsOfOption::for_session(Context& ctx, std::string& session, std::optional<std::string>* head) const {
  if (!arg_) return kLatest;
  SnapshotRef ref = read_ref(*arg_);
  if (ref.session && !ctx.session) session = ctx.db().resolve_session(ref.session);
  if (head && ref.head && !*head && ref.session.value_or(session) == session) *head = ref.head;
  return resolve_as_of(ctx.db(), session, ref.boundary_seq);
}

std::int64_t AsOfOption::for_database(Context& ctx) const {
  if (!arg_) return kLatest;
  return resolve_as_of(ctx.db(), std::nullopt, read_ref(*arg_).boundary_seq);
}

}  // namespace ctxfold::cli
