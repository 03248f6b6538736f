#include "summarize/http.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "util/dynlib.hpp"
#include "util/error.hpp"

namespace ctxfold {
namespace {

std::int64_t env_int(const Environment& env, const char* name, std::int64_t fallback, std::int64_t min) {
  const std::optional<std::string> raw = env.variable(name);
  if (!raw) return fallback;
  std::string_view text(*raw);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min) {
    throw Error(Exit::usage, "summarizer.config",
                fmt::format("{} must be an integer of at least {}, not '{}'", name, min, text));
  }
  return value;
}

/// libcurl's entry points, resolved on first use (util/dynlib.hpp): only the HTTP summarizers
/// need libcurl, and linked it drew ~30 shared libraries into the start-up of every command.
struct CurlApi {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_url) url;
  decltype(&::curl_url_cleanup) url_cleanup;
  decltype(&::curl_url_set) url_set;
  decltype(&::curl_url_get) url_get;
  decltype(&::curl_free) free;
};

/// Loads libcurl once (and runs curl_global_init), or throws Exit::environment naming it.
const CurlApi& curl() {
  static const CurlApi api = [] {
    static const DynLib lib(CTXFOLD_LIBCURL_SONAME, "libcurl4");
    CurlApi a{};
    lib.get(a.global_init, "curl_global_init");
    lib.get(a.easy_init, "curl_easy_init");
    lib.get(a.easy_cleanup, "curl_easy_cleanup");
    lib.get(a.easy_setopt, "curl_easy_setopt");
    lib.get(a.easy_perform, "curl_easy_perform");
    lib.get(a.easy_getinfo, "curl_easy_getinfo");
    lib.get(a.easy_strerror, "curl_easy_strerror");
    lib.get(a.slist_append, "curl_slist_append");
    lib.get(a.slist_free_all, "curl_slist_free_all");
    lib.get(a.url, "curl_url");
    lib.get(a.url_cleanup, "curl_url_cleanup");
    lib.get(a.url_set, "curl_url_set");
    lib.get(a.url_get, "curl_url_get");
    lib.get(a.free, "curl_free");
    a.global_init(CURL_GLOBAL_DEFAULT);
    return a;
  }();
  return api;
}

struct EasyDeleter {
  void operator()(CURL* h) const { curl().easy_cleanup(h); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl().slist_free_all(l); }
};
struct UrlDeleter {
  void operator()(CURLU* u) const { curl().url_cleanup(u); }
};

/// What one attempt collects from libcurl's callbacks.
struct Attempt {
  std::string body;
  std::size_t limit = 0;
  bool overflow = false;
  std::optional<std::chrono::milliseconds> retry_after;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  std::size_t len = size * n;
  if (a->body.size() + len > a->limit) {
    a->overflow = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  a->body.append(data, len);
  return len;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<std::int64_t> parse_uint(std::string_view s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

/// Picks Retry-After (delta seconds; an HTTP date is ignored) and retry-after-ms from the
/// response headers; a new status line (after 100 Continue or a proxy) starts over.
std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* a = static_cast<Attempt*>(user);
  std::size_t len = size * n;
  std::string_view line(data, len);
  if (line.rfind("HTTP/", 0) == 0) {
    a->retry_after.reset();
    return len;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  std::string_view name = trim(line.substr(0, colon));
  std::string_view value = trim(line.substr(colon + 1));
  if (iequals(name, "retry-after-ms")) {
    if (auto v = parse_uint(value)) a->retry_after = std::chrono::milliseconds(*v);
  } else if (iequals(name, "retry-after") && !a->retry_after) {
    if (auto v = parse_uint(value)) a->retry_after = std::chrono::milliseconds(*v * 1000);
  }
  return len;
}

bool retryable_status(long status) { return status == 429 || status >= 500; }

bool retryable_transport(CURLcode rc) {
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR ||
         rc == CURLE_GOT_NOTHING;
}

}  // namespace

HttpOptions http_options_from_env(const Environment& env) {
  HttpOptions o;
  o.timeout = std::chrono::milliseconds(env_int(env, "CTXFOLD_HTTP_TIMEOUT_MS", o.timeout.count(), 1));
  o.connect_timeout =
      std::chrono::milliseconds(env_int(env, "CTXFOLD_HTTP_CONNECT_TIMEOUT_MS", o.connect_timeout.count(), 1));
  o.max_retries = static_cast<int>(std::min<std::int64_t>(env_int(env, "CTXFOLD_HTTP_RETRIES", o.max_retries, 0), 20));
  o.initial_backoff =
      std::chrono::milliseconds(env_int(env, "CTXFOLD_HTTP_BACKOFF_MS", o.initial_backoff.count(), 0));
  return o;
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  static constexpr std::string_view kMark = "[redacted]";
  for (const std::string& s : secrets) {
    if (s.empty()) continue;
    for (std::size_t pos = text.find(s); pos != std::string::npos; pos = text.find(s, pos + kMark.size())) {
      text.replace(pos, s.size(), kMark);
    }
  }
  return text;
}

std::string display_url(const std::string& url) {
  const CurlApi& c = curl();
  std::unique_ptr<CURLU, UrlDeleter> u(c.url());
  if (!u || c.url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "(invalid url)";
  auto part = [&](CURLUPart which) {
    char* p = nullptr;
    std::string out;
    if (c.url_get(u.get(), which, &p, 0) == CURLUE_OK && p != nullptr) out = p;
    c.free(p);
    return out;
  };
  std::string out = part(CURLUPART_SCHEME) + "://" + part(CURLUPART_HOST);
  if (std::string port = part(CURLUPART_PORT); !port.empty()) out += ":" + port;
  return out + part(CURLUPART_PATH);
}

HttpResponse http_post_json(const std::string& url, const std::vector<HttpHeader>& headers,
                            const std::string& body, const HttpOptions& opts) {
  const CurlApi& c = curl();
  std::vector<std::string> secrets;
  for (const HttpHeader& h : headers) secrets.push_back(h.value);
  const std::string where = display_url(url);

  std::unique_ptr<CURL, EasyDeleter> easy(c.easy_init());
  if (!easy) throw Error(Exit::environment, "summarizer.http", "cannot initialize libcurl");
  std::unique_ptr<curl_slist, ListDeleter> list;
  auto append = [&list, &c](const std::string& line) {
    curl_slist* head = c.slist_append(list.get(), line.c_str());  // same head once non-empty
    if (head == nullptr) throw Error(Exit::environment, "summarizer.http", "out of memory building headers");
    list.release();
    list.reset(head);
  };
  append("Content-Type: application/json");
  append("Accept: application/json");
  append("Expect:");  // no 100-continue round trip for large bodies
  for (const HttpHeader& hd : headers) append(hd.name + ": " + hd.value);

  CURL* h = easy.get();
  char errbuf[CURL_ERROR_SIZE];
  c.easy_setopt(h, CURLOPT_URL, url.c_str());
  c.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  c.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(h, CURLOPT_POST, 1L);
  c.easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  c.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  c.easy_setopt(h, CURLOPT_HTTPHEADER, list.get());
  c.easy_setopt(h, CURLOPT_USERAGENT, "ctxfold/0.1");
  c.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opts.connect_timeout.count()));
  c.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(opts.timeout.count()));
  c.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  c.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  c.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);

  std::chrono::milliseconds backoff = opts.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    Attempt a;
    a.limit = opts.max_response_bytes;
    errbuf[0] = '\0';
    c.easy_setopt(h, CURLOPT_WRITEDATA, &a);
    c.easy_setopt(h, CURLOPT_HEADERDATA, &a);
    CURLcode rc = c.easy_perform(h);
    bool last = attempt > opts.max_retries;

    std::optional<std::chrono::milliseconds> wait;
    if (rc == CURLE_OK) {
      long status = 0;
      c.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
      if (!retryable_status(status) || last) return HttpResponse{status, std::move(a.body), attempt};
      if (a.retry_after && *a.retry_after > opts.max_retry_after) {
        return HttpResponse{status, std::move(a.body), attempt};  // not worth waiting for
      }
      wait = a.retry_after;
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
      throw Error(Exit::environment, "summarizer.timeout",
                  fmt::format("no answer from {} within {} ms", where, opts.timeout.count()),
                  "raise CTXFOLD_HTTP_TIMEOUT_MS or summarize smaller chunks");
    } else if (a.overflow) {
      throw Error(Exit::environment, "summarizer.http",
                  fmt::format("answer from {} exceeds {} bytes", where, opts.max_response_bytes));
    } else if (!retryable_transport(rc) || last) {
      std::string detail = errbuf[0] != '\0' ? std::string(errbuf) : std::string(c.easy_strerror(rc));
      throw Error(Exit::environment, "summarizer.http",
                  redact(fmt::format("request to {} failed after {} attempt{}: {}", where, attempt,
                                     attempt == 1 ? "" : "s", detail),
                         secrets));
    }
    std::this_thread::sleep_for(wait.value_or(backoff));
    backoff = std::min(backoff * 2, opts.max_backoff);
  }
}

}  // namespace ctxfold
