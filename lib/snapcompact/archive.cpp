#include "snapcompact/archive.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>

#include "model/quoted_id.hpp"
#include "tokens/estimate.hpp"
#include "util/error.hpp"

namespace ctxfold {

namespace {

Provider estimate_provider(const std::string& provider) {
  if (provider == "openai" || provider == "openai-codex") return Provider::openai;
  if (provider == "google" || provider == "gemini" || provider == "google-vertex") return Provider::gemini;
  return Provider::anthropic;
}

}  // namespace

FrameGeometry frame_geometry(const ModelInfo& m) {
  FrameGeometry g;
  int width = std::min(m.frame_width, m.max_edge);
  int height = std::min(m.frame_rows * g.pitch, m.max_edge);
  if (m.short_edge > 0 && std::min(width, height) > m.short_edge) width = m.short_edge;
  g.columns = std::max(1, width / g.advance);
  g.rows = std::max(1, height / g.pitch);
  if (m.max_pixels > 0)
    while (g.rows > 1 && static_cast<std::int64_t>(g.width()) * g.full_height() > m.max_pixels) --g.rows;
  return g;
}

Json FrameBudget::to_json() const {
  return Json{{"limit", limit},
              {"binding", binding},
              {"provider", provider},
              {"inline_data", inline_data ? Json(*inline_data) : Json(nullptr)},
              {"hard", hard},
              {"window", window ? Json(*window) : Json(nullptr)}};
}

SnapSettings archive_settings(const Node& archive) {
  SnapSettings ss;
  const Json meta = archive.metadata.value("snapcompact", Json::object());
  if (auto w = meta.find("window"); w != meta.end() && w->is_number_integer()) ss.window = w->get<std::int64_t>();
  if (auto a = meta.find("archive_percent"); a != meta.end() && a->is_number_integer()) ss.archive_percent = a->get<int>();
  if (auto m = meta.find("max_frames"); m != meta.end() && m->is_number_integer()) ss.max_frames = m->get<int>();
  return ss;
}

FrameBudget frame_budget(const ModelInfo& m, const FrameGeometry& g, const SnapSettings& s) {
  FrameBudget b;
  if (s.max_frames) {
    b.provider = *s.max_frames;
  } else if (m.max_images > 0) {
    b.provider = m.max_images * 9 / 10;
  } else {
    const std::string& p = m.provider;
    if (p == "anthropic" || p == "amazon-bedrock" || p == "openrouter" || p == "antigravity") b.provider = 90;
    else if (p == "openai" || p == "openai-codex" || p == "google" || p == "gemini" || p == "google-vertex") b.provider = 200;
    else if (p == "umans") b.provider = 10;
    else b.provider = 5;
  }
  if (m.provider != "claude") b.inline_data = 60;
  std::optional<std::int64_t> window = s.window ? s.window : m.context_window;
  if (window) {
    const std::int64_t per = std::max<std::int64_t>(1, estimate_image_tokens(g.width(), g.full_height(), estimate_provider(m.provider)));
    b.window = (*window * s.archive_percent / 100) / per;
  }
  b.limit = b.provider;
  b.binding = "provider";
  auto take = [&](std::int64_t v, const char* name) {
    if (v < b.limit) {
      b.limit = v;
      b.binding = name;
    }
  };
  if (b.inline_data) take(*b.inline_data, "inline_data");
  take(b.hard, "hard");
  if (b.window) take(*b.window, "window");
  b.limit = std::max<std::int64_t>(1, b.limit);
  return b;
}

std::vector<std::size_t> kept_frames(std::size_t n, std::int64_t limit) {
  std::vector<std::size_t> out;
  const auto lim = static_cast<std::size_t>(std::max<std::int64_t>(1, limit));
  if (n <= lim) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  if (lim >= 2) out.push_back(0);
  for (std::size_t i = n - (lim >= 2 ? lim - 1 : 1); i < n; ++i) out.push_back(i);
  return out;
}

std::string archive_text(const Node& archive) {
  std::string out;
  if (archive.content.is_array())
    for (const auto& b : archive.content)
      if (b.is_object() && json_str(b, "type") == "text") out += json_str(b, "text");
  return out;
}

bool has_frame_cache(Store& store) {
  // Every current database has it (SQLite schema 3, server schema 3); a server database still at
  // version 2, opened by a read command (which does not migrate), does not.
  return store.db().has_schema_object("snapcompact_frames");
}

FrameSet archive_frames(Store* store, const Node& archive, const std::string& model, const SnapSettings& s, bool encode) {
  FrameSet fs;
  fs.model = lookup_model(model);
  fs.geometry = frame_geometry(fs.model);
  fs.budget = frame_budget(fs.model, fs.geometry, s);
  const std::string text = archive_text(archive);
  const std::vector<Row> rows = layout_rows(text, fs.geometry.columns);
  const std::vector<Frame> frames = split_frames(text, rows, fs.geometry);
  fs.total_frames = static_cast<std::int64_t>(frames.size());
  for (const auto& f : frames) fs.total_chars += f.chars;
  const std::vector<std::size_t> kept = kept_frames(frames.size(), fs.budget.limit);
  fs.dropped_frames = fs.total_frames - static_cast<std::int64_t>(kept.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (k < kept.size() && kept[k] == i) {
      ++k;
      continue;
    }
    fs.dropped_chars += frames[i].chars;
  }
  const bool cache = store && has_frame_cache(*store);
  for (std::size_t i : kept) {
    const Frame& f = frames[i];
    RenderedFrame rf;
    rf.index = i;
    rf.key = f.key;
    rf.width = f.width;
    rf.height = f.height;
    rf.chars = f.chars;
    bool hit = false;
    if (cache) {
      auto& st = store->db().cached("SELECT missing, png FROM snapcompact_frames WHERE key=?1");
      ResetOnExit reset(st);
      st.bind(1, f.key);
      if (st.step()) {
        hit = true;
        rf.cached = true;
        rf.missing_glyphs = st.int64(0);
        if (encode) rf.png_base64 = st.text(1);
      }
    }
    if (!hit && encode) {
      Bitmap b = draw_frame(text, rows, f, fs.geometry, &rf.missing_glyphs);
      rf.png_base64 = base64_encode(encode_png(b));
    } else if (!hit) {
      // Planning: count what the font lacks without drawing pixels worth encoding.
      draw_frame(text, rows, f, fs.geometry, &rf.missing_glyphs);
    }
    fs.missing_glyphs += rf.missing_glyphs;
    fs.frames.push_back(std::move(rf));
  }
  // The caption, then the images; it names nodes by their quoted ids (the source's in a fork).
  auto quoted = [&](const std::string& id) {
    std::optional<Node> n = store ? store->node(id, false) : std::nullopt;
    return n ? quoted_id(*n) : id;
  };
  std::string range;
  if (auto c = archive.metadata.find("covers"); c != archive.metadata.end() && c->is_object())
    range = fmt::format(" of {} source rows {} … {}", c->value("count", 0), quoted(json_str(*c, "first")),
                        quoted(json_str(*c, "last")));
  else if (!archive.covers_ids.empty())
    range = fmt::format(" of {} source rows {} … {}", archive.covers_ids.size(), quoted(archive.covers_ids.front()),
                        quoted(archive.covers_ids.back()));
  const std::string archive_id = quoted_id(archive);
  std::string caption = fmt::format(
      "[ctxfold snapcompact archive {}: the earlier conversation{} as {} image{} of text ({} of {} frames, {}x{} px, {} "
      "columns x {} rows of the 8x13 misc-fixed font, {} characters in all)",
      archive_id, range, fs.frames.size(), fs.frames.size() == 1 ? "" : "s", fs.frames.size(), fs.total_frames,
      fs.geometry.width(), fs.geometry.full_height(), fs.geometry.columns, fs.geometry.rows, fs.total_chars);
  if (fs.dropped_frames > 0)
    caption += fmt::format("; {} characters in {} frames between the first and the newest were dropped to fit the "
                           "frame budget of {} frames",
                           fs.dropped_chars, fs.dropped_frames, fs.budget.limit);
  if (fs.missing_glyphs > 0)
    caption += fmt::format("; {} characters the font lacks are drawn as \xEF\xBF\xBD", fs.missing_glyphs);
  caption += fmt::format("; `ctxfold expand {}` and `ctxfold grep` read the exact text]", archive_id);
  fs.content = Json::array({Json{{"type", "text"}, {"text", caption}}});
  for (const auto& f : fs.frames) {
    Json img{{"type", "image"}, {"media_type", "image/png"}};
    if (!f.png_base64.empty()) img["data"] = f.png_base64;
    img["width"] = f.width;
    img["height"] = f.height;
    fs.content.push_back(std::move(img));
  }
  return fs;
}

Json FrameSet::to_json() const {
  Json frames_json = Json::array();
  for (const auto& f : frames)
    frames_json.push_back(Json{{"index", f.index},
                               {"key", f.key},
                               {"width", f.width},
                               {"height", f.height},
                               {"chars", f.chars},
                               {"missing_glyphs", f.missing_glyphs},
                               {"cached", f.cached}});
  return Json{{"model", {{"id", model.id}, {"provider", model.provider}, {"known", model.known}, {"reads_images", model.reads_images}}},
              {"geometry",
               {{"advance", geometry.advance},
                {"pitch", geometry.pitch},
                {"columns", geometry.columns},
                {"rows", geometry.rows},
                {"width", geometry.width()},
                {"height", geometry.full_height()}}},
              {"budget", budget.to_json()},
              {"total", total_frames},
              {"kept", frames.size()},
              {"dropped", dropped_frames},
              {"dropped_chars", dropped_chars},
              {"total_chars", total_chars},
              {"missing_glyphs", missing_glyphs},
              {"frames", std::move(frames_json)}};
}

std::int64_t cache_frames(Store& store, const FrameSet& fs) {
  if (!has_frame_cache(store)) return 0;
  Txn t(store.db());
  const std::int64_t added = store_frames(store, fs);
  t.commit();
  return added;
}

bool all_frames_cached(const FrameSet& fs) {
  return std::all_of(fs.frames.begin(), fs.frames.end(), [](const RenderedFrame& f) { return f.cached; });
}

std::int64_t store_frames(Store& store, const FrameSet& fs) {
  if (!has_frame_cache(store)) return 0;
  std::int64_t added = 0;
  auto st = store.db().prepare(
      "INSERT INTO snapcompact_frames(key, geometry, width, height, chars, missing, png) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (key) DO NOTHING");
  for (const auto& f : fs.frames) {
    if (f.cached || f.png_base64.empty()) continue;
    st.reset();
    st.bind(1, f.key).bind(2, fs.geometry.key()).bind(3, std::int64_t(f.width)).bind(4, std::int64_t(f.height));
    st.bind(5, f.chars).bind(6, f.missing_glyphs).bind(7, f.png_base64);
    st.run();
    added += store.db().changes();
  }
  return added;
}

}  // namespace ctxfold
