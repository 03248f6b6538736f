#include "store/pg.hpp"

#include <libpq-fe.h>

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "store/db.hpp"
#include "util/dynlib.hpp"
#include "util/error.hpp"

namespace ctxfold::pg {
namespace {

/// libpq's entry points, resolved on first use (util/dynlib.hpp): only a server URL needs libpq,
/// and linked it would load libpq and its libssl/libcrypto/GSSAPI/LDAP dependencies at the
/// start-up of every command.
struct PqApi {
  decltype(&::PQclear) PQclear;
  decltype(&::PQcmdTuples) PQcmdTuples;
  decltype(&::PQconnectdb) PQconnectdb;
  decltype(&::PQerrorMessage) PQerrorMessage;
  decltype(&::PQexec) PQexec;
  decltype(&::PQexecParams) PQexecParams;
  decltype(&::PQexecPrepared) PQexecPrepared;
  decltype(&::PQfinish) PQfinish;
  decltype(&::PQfreemem) PQfreemem;
  decltype(&::PQgetisnull) PQgetisnull;
  decltype(&::PQgetlength) PQgetlength;
  decltype(&::PQgetvalue) PQgetvalue;
  decltype(&::PQnfields) PQnfields;
  decltype(&::PQntuples) PQntuples;
  decltype(&::PQprepare) PQprepare;
  decltype(&::PQresultErrorField) PQresultErrorField;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage;
  decltype(&::PQresultStatus) PQresultStatus;
  decltype(&::PQsetClientEncoding) PQsetClientEncoding;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor;
  decltype(&::PQstatus) PQstatus;
  decltype(&::PQtransactionStatus) PQtransactionStatus;
  decltype(&::PQunescapeBytea) PQunescapeBytea;
};

/// Loads libpq once, or throws Error(Exit::environment, "dependency.missing") naming it.
const PqApi& pq() {
  static const PqApi api = [] {
    static const DynLib lib(CTXFOLD_LIBPQ_SONAME, "libpq5");
    PqApi a{};
    lib.get(a.PQclear, "PQclear");
    lib.get(a.PQcmdTuples, "PQcmdTuples");
    lib.get(a.PQconnectdb, "PQconnectdb");
    lib.get(a.PQerrorMessage, "PQerrorMessage");
    lib.get(a.PQexec, "PQexec");
    lib.get(a.PQexecParams, "PQexecParams");
    lib.get(a.PQexecPrepared, "PQexecPrepared");
    lib.get(a.PQfinish, "PQfinish");
    lib.get(a.PQfreemem, "PQfreemem");
    lib.get(a.PQgetisnull, "PQgetisnull");
    lib.get(a.PQgetlength, "PQgetlength");
    lib.get(a.PQgetvalue, "PQgetvalue");
    lib.get(a.PQnfields, "PQnfields");
    lib.get(a.PQntuples, "PQntuples");
    lib.get(a.PQprepare, "PQprepare");
    lib.get(a.PQresultErrorField, "PQresultErrorField");
    lib.get(a.PQresultErrorMessage, "PQresultErrorMessage");
    lib.get(a.PQresultStatus, "PQresultStatus");
    lib.get(a.PQsetClientEncoding, "PQsetClientEncoding");
    lib.get(a.PQsetNoticeProcessor, "PQsetNoticeProcessor");
    lib.get(a.PQstatus, "PQstatus");
    lib.get(a.PQtransactionStatus, "PQtransactionStatus");
    lib.get(a.PQunescapeBytea, "PQunescapeBytea");
    return a;
  }();
  return api;
}

// Type oids of the parameters ctxfold binds (PostgreSQL's pg_type.dat).
constexpr unsigned kInt8 = 20;
constexpr unsigned kText = 25;
constexpr unsigned kBytea = 17;

/// The password of a URL's user info (postgresql://user:PASSWORD@host/db) or of its password=
/// parameter, empty when it has none.
std::string password_of(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  std::string_view rest = url.substr(scheme + 3);
  const auto end = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, end);
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view user = authority.substr(0, at);
    if (const auto colon = user.find(':'); colon != std::string_view::npos) return std::string(user.substr(colon + 1));
  }
  if (const auto p = url.find("password="); p != std::string_view::npos) {
    const auto stop = url.find('&', p);
    return std::string(url.substr(p + 9, stop == std::string_view::npos ? std::string_view::npos : stop - p - 9));
  }
  return {};
}

/// `text` with every occurrence of `secret` replaced by "***" (a secret under 3 bytes is left: it
/// would blank out ordinary words, and the URL itself is always redacted).
std::string scrub(std::string text, const std::string& secret) {
  if (secret.size() < 3) return text;
  for (auto p = text.find(secret); p != std::string::npos; p = text.find(secret, p + 3)) text.replace(p, secret.size(), "***");
  return text;
}

/// libpq's message without its trailing newline, and without "ERROR:  " (the severity).
std::string tidy(const char* msg) {
  std::string s = msg ? msg : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.rfind("ERROR:  ", 0) == 0) s.erase(0, 8);
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.erase(nl);
  return s;
}

void quiet_notices(void*, const char*) {}

}  // namespace

bool is_url(std::string_view path) {
  return path.rfind("postgresql://", 0) == 0 || path.rfind("postgres://", 0) == 0;
}

namespace {
/// The URL with the password of its user info and of its password= parameter replaced by `with`,
/// or, when `with` is null, taken out with the ':' or the parameter's own separator.
std::string edit_password(std::string_view url, const char* with) {
  std::string out(url);
  if (password_of(url).empty()) return out;
  const auto scheme = out.find("://");
  const auto at = out.find('@', scheme);
  const auto colon = out.find(':', scheme + 3);
  if (at != std::string::npos && colon != std::string::npos && colon < at) {
    if (with) out.replace(colon + 1, at - colon - 1, with);
    else out.erase(colon, at - colon);
  }
  if (const auto p = out.find("password="); p != std::string::npos) {
    const auto stop = out.find('&', p);
    if (with) {
      out.replace(p + 9, stop == std::string::npos ? std::string::npos : stop - p - 9, with);
    } else if (stop != std::string::npos) {
      out.erase(p, stop + 1 - p);  // "password=x&" of "?password=x&host=y" or "&password=x&"
    } else {
      out.erase(p - 1);  // "?password=x" or "&password=x" at the end
    }
  }
  return out;
}
}  // namespace

std::string redact(std::string_view url) { return edit_password(url, "***"); }

std::string without_password(std::string_view url) { return edit_password(url, nullptr); }

std::string translate(std::string_view sql, int& params) {
  std::string out;
  out.reserve(sql.size() + 8);
  params = 0;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {  // a quoted string or identifier, doubled quotes inside
      const std::size_t close = sql.find(c, i + 1);
      const std::size_t stop = close == std::string_view::npos ? sql.size() : close + 1;
      out.append(sql.substr(i, stop - i));
      i = stop - 1;
      continue;
    }
    if (c == '?') {
      std::size_t j = i + 1;
      int n = 0;
      while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) n = n * 10 + (sql[j++] - '0');
      if (j == i + 1) n = params + 1;  // a bare ?: the next number
      params = std::max(params, n);
      out += fmt::format("${}", n);
      i = j - 1;
      continue;
    }
    if ((c == 'C' || c == 'c') && sql.substr(i).size() > 11 && strncasecmp(sql.data() + i, "CROSS JOIN ", 11) == 0 &&
        (i == 0 || !std::isalnum(static_cast<unsigned char>(sql[i - 1])))) {
      out += "JOIN ";  // SQLite's join-order hint; PostgreSQL's CROSS JOIN takes no ON clause
      i += 10;
      continue;
    }
    if ((c == 'I' || c == 'i') && sql.substr(i).size() > 10 && strncasecmp(sql.data() + i, "INDEXED BY ", 11) == 0 &&
        (i == 0 || !std::isalnum(static_cast<unsigned char>(sql[i - 1])))) {
      std::size_t j = i + 11;
      while (j < sql.size() && sql[j] == ' ') ++j;
      while (j < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[j])) || sql[j] == '_')) ++j;
      while (j < sql.size() && sql[j] == ' ' && !out.empty() && out.back() == ' ') ++j;  // one space stays
      i = j - 1;  // the planner hint has no PostgreSQL spelling; its planner keeps statistics
      continue;
    }
    out += c;
  }
  return out;
}

Conn::Conn(const std::string& url, bool read_only) : url_(redact(url)), password_(password_of(url)) {
  conn_ = pq().PQconnectdb(url.c_str());
  if (conn_ == nullptr || pq().PQstatus(conn_) != CONNECTION_OK) {
    const std::string msg = scrub(tidy(conn_ ? pq().PQerrorMessage(conn_) : "out of memory"), password_);
    if (conn_) pq().PQfinish(conn_);
    conn_ = nullptr;
    (void)read_only;
    throw Error(Exit::environment, "db.open", fmt::format("cannot open database '{}': {}", url_, msg),
                "check the --db URL, the server and the credentials (docs/backends.md)");
  }
  pq().PQsetNoticeProcessor(conn_, quiet_notices, nullptr);
  pq().PQsetClientEncoding(conn_, "UTF8");
}

Conn::~Conn() {
  if (conn_) pq().PQfinish(conn_);
}

void Conn::fail(pg_result* res, std::string_view what, std::string_view sql) const {
  const char* state = res ? pq().PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const std::string code = state ? state : "";
  std::string msg = scrub(tidy(res ? pq().PQresultErrorMessage(res) : pq().PQerrorMessage(conn_)), password_);
  if (msg.empty()) msg = scrub(tidy(pq().PQerrorMessage(conn_)), password_);
  if (res) pq().PQclear(res);
  const std::string cls = code.substr(0, 2);
  if (code.empty() || cls == "08" || cls == "57" || cls == "53" || pq().PQstatus(conn_) != CONNECTION_OK)
    throw Error(Exit::environment, "db.io", fmt::format("{} on '{}': {}", what, url_, msg),
                "check the server; nothing of this write was committed");
  if (code == "40001" || code == "40P01" || code == "55P03")
    throw Error(Exit::environment, "db.locked", fmt::format("database is locked ({}): {}", what, msg),
                "another ctxfold process is writing; retry");
  if (code == "42P01" || code == "42703") {
    std::string detail = msg;
    if (const auto q = msg.find('"'); q != std::string::npos) {
      const auto q2 = msg.find('"', q + 1);
      const std::string name = msg.substr(q + 1, q2 - q - 1);
      detail = fmt::format("{} {} is missing", code == "42P01" ? "table" : "column", name);
    }
    throw Error(Exit::bad_input, "db.damaged", fmt::format("'{}' is damaged: {}", url_, detail), kDamagedDatabaseHint);
  }
  if (cls == "23" || code == "P0001" || cls == "22")
    throw Error(Exit::bad_input, "db.constraint", fmt::format("{}: {}", what, msg));
  if (code == "25006" || code == "42501")
    throw Error(Exit::environment, "db.io", fmt::format("{} on '{}': {}", what, url_, msg));
  (void)sql;
  throw Error(Exit::internal, "db.error", fmt::format("{}: {} (SQLSTATE {})", what, msg, code));
}

void Conn::exec(std::string_view sql) {
  const std::string s(sql);
  PGresult* res = pq().PQexec(conn_, s.c_str());
  const auto status = res ? pq().PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(res, "exec", sql);
  pq().PQclear(res);
}

void Conn::exec_quietly(const char* sql) noexcept {
  if (conn_ == nullptr) return;
  if (PGresult* res = pq().PQexec(conn_, sql)) pq().PQclear(res);
}

bool Conn::in_transaction() const { return pq().PQtransactionStatus(conn_) != PQTRANS_IDLE; }

std::int64_t Conn::last_insert_id() {
  PGresult* res = pq().PQexec(conn_, "SELECT lastval()");
  if (pq().PQresultStatus(res) != PGRES_TUPLES_OK) fail(res, "lastval", {});
  const std::int64_t v = std::strtoll(pq().PQgetvalue(res, 0, 0), nullptr, 10);
  pq().PQclear(res);
  return v;
}

Query::Query(Conn& conn, std::string_view sql) : conn_(conn) {
  sql_ = translate(sql, params_);  // after params_'s own initializer
  values_.resize(params_);
  types_.assign(params_, 0);
  formats_.assign(params_, 0);
}

Query::~Query() {
  if (res_) pq().PQclear(res_);
  if (conn_.closing_) return;
  close_cursor();
  for (auto& p : prepared_) conn_.stale_.push_back(std::move(p.second));
}

void Conn::release_stale() {
  if (stale_.empty() || in_transaction()) return;
  std::string sql;
  for (const auto& name : stale_) sql += fmt::format("DEALLOCATE {};", name);
  exec_quietly(sql.c_str());
  stale_.clear();
}

const char* Query::prepared_name() {
  if (++executions_ <= kPrepareAfter) return nullptr;
  for (const auto& p : prepared_)
    if (p.first == types_) return p.second.c_str();
  conn_.release_stale();
  std::string name = fmt::format("ctxfold_{}", ++conn_.statements_);
  PGresult* res = pq().PQprepare(conn_.conn_, name.c_str(), sql_.c_str(), params_, types_.data());
  if (res == nullptr || pq().PQresultStatus(res) != PGRES_COMMAND_OK) conn_.fail(res, "prepare", sql_);
  pq().PQclear(res);
  prepared_.emplace_back(types_, std::move(name));
  return prepared_.back().second.c_str();
}

void Query::set(int i, std::optional<std::string> v, unsigned type, int format) {
  if (i < 1 || i > params_)
    throw Error(Exit::internal, "db.error", fmt::format("bind: parameter {} out of range ({} parameters)", i, params_));
  values_[i - 1] = std::move(v);
  types_[i - 1] = type;
  formats_[i - 1] = format;
}

void Query::bind_text(int i, std::string_view v) { set(i, std::string(v), kText, 0); }
void Query::bind_int(int i, std::int64_t v) { set(i, std::to_string(v), kInt8, 0); }
void Query::bind_bytes(int i, std::string_view v) { set(i, std::string(v), kBytea, 1); }
void Query::bind_null(int i) { set(i, std::nullopt, 0, 0); }

bool Query::fetch() {
  if (res_) pq().PQclear(res_);
  const std::string sql = fmt::format("FETCH FORWARD {} FROM {}", batch_, cursor_);
  res_ = pq().PQexec(conn_.conn_, sql.c_str());
  if (res_ == nullptr || pq().PQresultStatus(res_) != PGRES_TUPLES_OK) {
    PGresult* failed = res_;
    res_ = nullptr;
    conn_.fail(failed, "step", sql_);
  }
  rows_ = pq().PQntuples(res_);
  row_ = -1;
  if (rows_ < batch_) close_cursor();  // the last batch: nothing more to fetch
  return rows_ > 0;
}

void Query::close_cursor() noexcept {
  if (cursor_.empty()) return;
  if (conn_.in_transaction()) conn_.exec_quietly(("CLOSE " + cursor_).c_str());
  cursor_.clear();
}

bool Query::step() {
  if (res_ == nullptr) {
    std::vector<const char*> values(params_);
    std::vector<int> lengths(params_);
    for (int i = 0; i < params_; ++i) {
      values[i] = values_[i] ? values_[i]->data() : nullptr;
      lengths[i] = values_[i] ? static_cast<int>(values_[i]->size()) : 0;
    }
    if (batch_ > 0 && conn_.in_transaction()) {
      // A streamed scan (stream()): the statement becomes a cursor, read a batch at a time.
      cursor_ = fmt::format("ctxfold_c{}", ++conn_.cursors_);
      const std::string declare = fmt::format("DECLARE {} NO SCROLL CURSOR FOR {}", cursor_, sql_);
      PGresult* d = pq().PQexecParams(conn_.conn_, declare.c_str(), params_, types_.data(), values.data(),
                                      lengths.data(), formats_.data(), 0);
      if (d == nullptr || pq().PQresultStatus(d) != PGRES_COMMAND_OK) {
        cursor_.clear();
        conn_.fail(d, "step", sql_);
      }
      pq().PQclear(d);
      fetch();  // the first batch: res_, rows_ and row_ as below
    } else {
      if (const char* name = prepared_name())
        res_ = pq().PQexecPrepared(conn_.conn_, name, params_, values.data(), lengths.data(), formats_.data(), 0);
      else
        res_ = pq().PQexecParams(conn_.conn_, sql_.c_str(), params_, types_.data(), values.data(), lengths.data(),
                                 formats_.data(), 0);
      const auto status = res_ ? pq().PQresultStatus(res_) : PGRES_FATAL_ERROR;
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        PGresult* failed = res_;
        res_ = nullptr;
        conn_.fail(failed, "step", sql_);
      }
      const char* changed = pq().PQcmdTuples(res_);
      if (changed && *changed) conn_.changes_ = std::strtoll(changed, nullptr, 10);
      rows_ = pq().PQntuples(res_);
      row_ = -1;
    }
  }
  if (row_ < rows_) ++row_;
  if (row_ == rows_ && !cursor_.empty()) return fetch() && ++row_ < rows_;
  return row_ < rows_;
}

void Query::reset() {
  close_cursor();
  if (res_) pq().PQclear(res_);
  res_ = nullptr;
  row_ = -1;
  rows_ = 0;
  for (auto& v : values_) v.reset();
  types_.assign(params_, 0);
  formats_.assign(params_, 0);
}

std::int64_t Query::int64(int col) const {
  if (is_null(col)) return 0;
  const char* v = pq().PQgetvalue(res_, row_, col);
  if (v[0] == 't' && v[1] == '\0') return 1;
  if (v[0] == 'f' && v[1] == '\0') return 0;
  return std::strtoll(v, nullptr, 10);
}

std::string_view Query::view(int col) const {
  if (is_null(col)) return {};
  return {pq().PQgetvalue(res_, row_, col), static_cast<std::size_t>(pq().PQgetlength(res_, row_, col))};
}

std::string_view Query::bytes(int col) const {
  if (is_null(col)) return {};
  std::size_t n = 0;
  unsigned char* raw = pq().PQunescapeBytea(reinterpret_cast<const unsigned char*>(pq().PQgetvalue(res_, row_, col)), &n);
  if (raw == nullptr) throw Error(Exit::environment, "db.io", "out of memory decoding a bytea column");
  buffer_.assign(reinterpret_cast<const char*>(raw), n);
  pq().PQfreemem(raw);
  return buffer_;
}

bool Query::is_null(int col) const {
  return res_ == nullptr || row_ < 0 || row_ >= rows_ || col >= pq().PQnfields(res_) || pq().PQgetisnull(res_, row_, col);
}

}  // namespace ctxfold::pg
