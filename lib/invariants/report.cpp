#include "invariants/report.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "invariants/catalog.hpp"

namespace ctxfold {
namespace {

/// Length of the well-formed UTF-8 sequence at s[i], 0 when ill-formed.
std::size_t utf8_len(const std::string& s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(i + k) & 0x3F);
  static const std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
  return n;
}

/// Whether c's findings belong to the database as a whole only (scope database in kInvariants).
bool database_only(const Check& c) {
  const InvariantInfo* row = find_invariant(c.id);
  return row && row->scope == InvariantScope::database;
}

/// The findings vs as JSON objects {"session" (null when database-wide), "nodes", "message"}.
Json violations_json(const std::vector<Violation>& vs) {
  Json out = Json::array();
  for (const auto& v : vs)
    out.push_back(Json{{"session", v.session.empty() ? Json(nullptr) : Json(v.session)},
                       {"nodes", v.nodes},
                       {"message", v.message}});
  return out;
}

}  // namespace

Json verify_to_json(const VerifyReport& r) {
  Json checks = Json::array();
  for (const auto& c : r.checks)
    checks.push_back(Json{{"id", c.id},
                          {"name", c.name},
                          {"ok", c.ok},
                          {"violations", violations_json(c.violations)},
                          {"warnings", violations_json(c.warnings)},
                          {"source", c.source}});
  for (std::size_t k = 0; k < r.checks.size(); ++k)
    if (r.checks[k].skipped) {
      checks[k]["skipped"] = true;
      checks[k]["skipped_reason"] = r.checks[k].skipped_reason;
    }
  Json out{{"schema", "ctxfold.verify/1"}, {"ok", r.ok}, {"sessions", r.sessions}, {"checks", std::move(checks)}};
  if (r.quick) out["quick"] = true;
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = utf8_len(s, i);
    if (n == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      out += "\xEF\xBF\xBD";
      i += n == 0 ? 1 : n;
      continue;
    }
    if (n == 1) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        case '\n': out += "&#10;"; break;  // kept in attribute values too
        case '\r': out += "&#13;"; break;
        case '\t': out += "&#9;"; break;
        default: out += static_cast<char>(c);
      }
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  return out;
}

namespace {

std::string describe(const Violation& v) {
  std::string nodes;
  for (const auto& n : v.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
  return nodes.empty() ? v.message : fmt::format("{} [nodes: {}]", v.message, nodes);
}

void testcase(std::string& out, const Check& c, const std::string& classname, const std::string& session,
              int& tests, int& failures, int& skipped) {
  std::vector<const Violation*> vs, ws;
  for (const auto& v : c.violations)
    if (v.session == session) vs.push_back(&v);
  for (const auto& w : c.warnings)
    if (w.session == session) ws.push_back(&w);
  ++tests;
  out += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", xml_escape(classname),
                     xml_escape(c.id + " " + c.name));
  out += fmt::format("      <properties><property name=\"source\" value=\"{}\"/></properties>\n", xml_escape(c.source));
  if (c.skipped) {
    ++skipped;
    out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(c.skipped_reason));
  } else if (!vs.empty()) {
    ++failures;
    std::string body;
    for (const auto* v : vs) body += describe(*v) + "\n";
    out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml_escape(vs.front()->message),
                       xml_escape(c.id), xml_escape(body));
  }
  if (!ws.empty()) {
    std::string body;
    for (const auto* w : ws) body += "warning: " + describe(*w) + "\n";
    out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(body));
  }
  out += "    </testcase>\n";
}

}  // namespace

std::string verify_to_junit(const std::vector<VerifiedDb>& dbs) {
  std::string suites;
  int all_tests = 0, all_failures = 0, all_skipped = 0, all_errors = 0;
  for (const auto& db : dbs) {
    std::string cases;
    int tests = 0, failures = 0, skipped = 0, errors = 0;
    if (!db.error.empty()) {
      tests = errors = 1;
      cases = fmt::format("    <testcase classname=\"(database)\" name=\"open {}\">\n      <error message=\"{}\" type=\"{}\">{}</error>\n    </testcase>\n",
                          xml_escape(db.path), xml_escape(db.error), xml_escape(db.error_code), xml_escape(db.error));
    }
    const VerifyReport& r = db.report;
    for (const auto& c : r.checks) {
      // Database-wide findings (session empty) form their own testcase; I11 is only database-wide.
      const bool db_only = database_only(c);
      bool has_db_wide = db_only;
      for (const auto& v : c.violations) has_db_wide = has_db_wide || v.session.empty();
      for (const auto& w : c.warnings) has_db_wide = has_db_wide || w.session.empty();
      if (has_db_wide) testcase(cases, c, "(database)", "", tests, failures, skipped);
      if (db_only) continue;
      for (const auto& s : r.sessions) testcase(cases, c, s, s, tests, failures, skipped);
    }
    suites += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
                          xml_escape(db.path), tests, failures, errors, skipped);
    suites += cases;
    suites += "  </testsuite>\n";
    all_tests += tests;
    all_failures += failures;
    all_skipped += skipped;
    all_errors += errors;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ctxfold verify-invariants\" tests=\"{}\" "
      "failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n{}</testsuites>\n",
      all_tests, all_failures, all_errors, all_skipped, suites);
}

std::string verify_to_text(const VerifiedDb& db, bool colour) {
  const VerifyReport& r = db.report;
  // SGR: green ok, red FAILED, yellow warnings (ECMA-48); only when the caller's stdout takes colour.
  auto paint = [&](const char* sgr, const std::string& s) { return colour ? fmt::format("\x1b[{}m{}\x1b[0m", sgr, s) : s; };
  if (!db.error.empty()) return fmt::format("{}\n     error: {}\n", db.path, db.error);
  std::string out = fmt::format("{}{}\n", db.path, r.quick ? " (--quick)" : "");
  for (const auto& c : r.checks) {
    out += fmt::format("{:<4} {:<40} {}\n", c.id, c.name,
                       c.skipped ? "skipped" : c.ok ? paint("32", "ok") : paint("1;31", "FAILED"));
    for (const auto& v : c.violations)
      out += fmt::format("     {} [{}]: {}\n", paint("31", "violation"), v.session.empty() ? "(database)" : v.session, describe(v));
    for (const auto& w : c.warnings)
      out += fmt::format("     {} [{}]: {}\n", paint("33", "warning"), w.session.empty() ? "(database)" : w.session, describe(w));
  }
  out += fmt::format("{} session(s): {}\n", r.sessions.size(), r.ok ? "all invariants hold" : "violations found");
  return out;
}

}  // namespace ctxfold
