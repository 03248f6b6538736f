// Write-back for the Codex CLI (docs/formats/writeback.md "Codex"): a rollout whose history is the
// Responses input ctxfold renders (docs/formats/codex.md).
#include <fmt/format.h>

#include "session/writeback_detail.hpp"
#include "util/environment.hpp"

namespace ctxfold::writeback_detail {

void write_codex(const Rendered& r, const WritebackOptions& opts, Writeback& w) {
  w.client = "codex";
  // UUID version 7: 48 bits of Unix milliseconds, then random bits (Codex names its threads so).
  w.id = opts.id.empty() ? uuid_from_hex(fmt::format("{:012x}", opts.now * 1000) + random_hex(10), '7') : opts.id;
  const std::string t = rfc3339_utc(opts.now);  // YYYY-MM-DDThh:mm:ssZ
  std::string stamp = t.substr(0, 19);
  for (std::size_t i = 11; i < stamp.size(); ++i)
    if (stamp[i] == ':') stamp[i] = '-';
  w.relative_path = fmt::format("sessions/{}/{}/{}/rollout-{}-{}.jsonl", t.substr(0, 4), t.substr(5, 2), t.substr(8, 2),
                                stamp, w.id);
  const std::string ts = timestamp_ms(opts.now);
  w.lines.push_back(dump_json(Json{{"timestamp", ts},
                                   {"type", "session_meta"},
                                   {"payload", Json{{"id", w.id},
                                                    {"timestamp", ts},
                                                    {"cwd", w.cwd},
                                                    {"originator", "ctxfold"},
                                                    {"cli_version", "ctxfold"},
                                                    {"source", "cli"},
                                                    {"ctxfold", w.provenance}}}}));
  const Json body = render_request_body(r, RenderFormat::responses);
  for (const auto& item : body["input"]) {
    w.lines.push_back(dump_json(Json{{"timestamp", ts}, {"type", "response_item"}, {"payload", item}}));
    ++w.messages;
  }
}

}  // namespace ctxfold::writeback_detail
