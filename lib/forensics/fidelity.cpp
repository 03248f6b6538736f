#include "forensics/fidelity.hpp"

#include <algorithm>
#include <unordered_map>

#include "render/render.hpp"
#include "util/utf8.hpp"

namespace ctxfold {
namespace {

/// A message's content as blocks, without cache markers (they change no text the model reads).
Json normalized_blocks(const Json& msg) {
  Json out = Json::array();
  const Json c = msg.is_object() && msg.contains("content") ? msg["content"] : Json();
  auto clean = [](Json b) {
    if (b.is_object()) {
      b.erase("cache_control");
      // "is_error": false is the API's default: the same request whether written or not.
      if (auto e = b.find("is_error"); e != b.end() && e->is_boolean() && !e->get<bool>()) b.erase("is_error");
      if (b.contains("content") && b["content"].is_array())
        for (auto& x : b["content"])
          if (x.is_object()) x.erase("cache_control");
    }
    return b;
  };
  if (c.is_string()) out.push_back(Json{{"type", "text"}, {"text", c}});
  else if (c.is_array())
    for (const auto& b : c) out.push_back(clean(b));
  return out;
}

/// Equality of JSON values regardless of object key order (the client writes tool_use_id before
/// type, ctxfold the other way round; the API reads them the same).
bool same_json(const Json& a, const Json& b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

Json cut(Json b) {
  auto shorten = [](Json& s) {
    if (s.is_string() && s.get_ref<const std::string&>().size() > 300)
    {
      const std::string& t = s.get_ref<const std::string&>();
      s = t.substr(0, utf8_safe_prefix(t, 300)) + "...";
    }
  };
  if (b.is_object()) {
    for (const char* k : {"text", "thinking", "data", "signature"})
      if (b.contains(k)) shorten(b[k]);
    if (b.contains("content")) {
      if (b["content"].is_string()) shorten(b["content"]);
      else if (b["content"].is_array())
        for (auto& x : b["content"])
          if (x.is_object() && x.contains("text")) shorten(x["text"]);
    }
    if (b.contains("source") && b["source"].is_object() && b["source"].contains("data")) b["source"]["data"] = "...";
  }
  return b;
}

}  // namespace

FidelityReport client_request_fidelity(Store& store, const std::string& session) {
  FidelityReport rep;
  rep.session = session;
  std::unordered_map<std::string, Json> blobs;
  store.for_each_source_record(session, "api-request-blob", [&](const Store::SourceRecord& r) {
    Json v = Json::parse(r.raw, nullptr, false);
    if (v.is_object() && v.contains("hash") && v["hash"].is_string() && v.contains("message"))
      blobs[v["hash"].get<std::string>()] = v["message"];
    return true;
  });
  // The stored reply of each request: the first assistant node naming it.
  struct Reply {
    std::string pred;
    std::int64_t seq = 0;
  };
  std::unordered_map<std::string, Reply> reply_pred;
  store.for_each_node(
      session,
      [&](const Node& n) {
        if (n.role == role::kAssistant && n.metadata.contains("request_ref") && n.metadata["request_ref"].is_string()) {
          const std::string ref = n.metadata["request_ref"].get<std::string>();
          if (!reply_pred.count(ref)) reply_pred[ref] = Reply{n.predecessor.value_or(""), n.seq};
        }
        return true;
      },
      kLatest, false);
  std::unordered_map<std::string, std::vector<std::string>> prev;  // file -> the previous request's hashes
  store.for_each_source_record(session, "api-request", [&](const Store::SourceRecord& r) {
    Json v = Json::parse(r.raw, nullptr, false);
    if (!v.is_object()) return true;
    RecordedRequest q;
    q.id = json_str(v, "id");
    q.source = r.source;
    q.line = r.line;
    std::vector<std::string> hashes;
    std::vector<std::string>& before = prev[r.source];
    std::int64_t keep = v.contains("keep") && v["keep"].is_number_integer() ? v["keep"].get<std::int64_t>() : 0;
    for (std::int64_t i = 0; i < keep && i < static_cast<std::int64_t>(before.size()); ++i) hashes.push_back(before[i]);
    if (v.contains("tail") && v["tail"].is_array())
      for (const auto& h : v["tail"])
        if (h.is_string()) hashes.push_back(h.get<std::string>());
    before = hashes;
    q.messages = static_cast<std::int64_t>(hashes.size());
    auto rp = reply_pred.find(q.id);
    if (rp == reply_pred.end() || rp->second.pred.empty()) {
      ++rep.without_reply;
      rep.requests.push_back(std::move(q));
      return true;
    }
    q.head = rp->second.pred;
    RenderOptions o;
    o.head = q.head;
    // The state when the reply was stored: a summary written later is not applied.
    o.as_of = rp->second.seq;
    Json body = render_request_body(render_context(store, session, o), RenderFormat::anthropic);
    const Json& msgs = body["messages"];
    const std::size_t n = std::max(hashes.size(), msgs.size());
    for (std::size_t i = 0; i < n; ++i) {
      const Json* ren = i < msgs.size() ? &msgs[i] : nullptr;
      auto blob = i < hashes.size() ? blobs.find(hashes[i]) : blobs.end();
      if (i >= hashes.size()) {
        q.differences.push_back(Json{{"message", i}, {"problem", "rendered, but not in the recorded request"},
                                     {"role", json_str(*ren, "role")}});
        continue;
      }
      if (!ren) {
        q.differences.push_back(Json{{"message", i}, {"problem", "recorded, but not in the render"}});
        continue;
      }
      if (blob == blobs.end()) continue;  // an assistant message: the client keeps no body for it
      ++q.compared;
      const std::string role = json_str(blob->second, "role");
      if (role != json_str(*ren, "role")) {
        q.differences.push_back(Json{{"message", i}, {"problem", "role differs"}, {"role", role}});
        continue;
      }
      Json a = normalized_blocks(blob->second), b = normalized_blocks(*ren);
      bool same = true;
      for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
        const bool ha = k < a.size(), hb = k < b.size();
        if (ha && hb && same_json(a[k], b[k])) continue;
        same = false;
        q.differences.push_back(Json{{"message", i},
                                     {"block", k},
                                     {"role", role},
                                     {"recorded", ha ? cut(a[k]) : Json(nullptr)},
                                     {"rendered", hb ? cut(b[k]) : Json(nullptr)}});
      }
      if (same) ++q.equal;
    }
    rep.requests.push_back(std::move(q));
    return true;
  });
  return rep;
}

Json fidelity_json(const FidelityReport& r) {
  Json reqs = Json::array();
  std::int64_t compared = 0, equal = 0, differing = 0;
  for (const auto& q : r.requests) {
    compared += q.compared;
    equal += q.equal;
    if (!q.differences.empty()) ++differing;
    reqs.push_back(Json{{"request", q.id},
                        {"source", q.source},
                        {"line", q.line},
                        {"head", q.head.empty() ? Json(nullptr) : Json(q.head)},
                        {"messages", q.messages},
                        {"compared", q.compared},
                        {"equal", q.equal},
                        {"differences", q.differences}});
  }
  return Json{{"schema", "ctxfold.tokens.client_requests/1"},
              {"session", r.session},
              {"requests", std::move(reqs)},
              {"summary",
               {{"requests", static_cast<std::int64_t>(r.requests.size())},
                {"without_reply", r.without_reply},
                {"compared", compared},
                {"equal", equal},
                {"differing_requests", differing}}}};
}

}  // namespace ctxfold
