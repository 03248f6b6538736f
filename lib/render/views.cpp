// What a render adds to the walked items under its view policy: snapcompact's frames in place of
// an archive's text, and the session's notes at the start of the request.
#include "render/render_parts.hpp"

#include "snapcompact/archive.hpp"

namespace ctxfold::render_detail {

/// An archive stands in the request as its frames (docs/strategies.md "snapcompact"): a caption,
/// then one PNG image block per frame the budget keeps. r.frames describes the newest archive's.
void draw_frames(Store& store, const RenderOptions& opts, const std::unordered_set<std::string>& archive_folds,
                 Rendered& r) {
  for (const auto& f : r.folds)
    if (f.kind == "archive") r.archive = f.id;
  for (Node& n : r.items)
    if (archive_folds.count(n.id)) {
      if (n.content.is_array() && !n.content.empty()) n.content.erase(n.content.begin());  // the fold_header
      SnapSettings ss = archive_settings(n);
      if (opts.window) ss.window = opts.window;
      if (opts.archive_percent) ss.archive_percent = *opts.archive_percent;
      if (opts.max_frames) ss.max_frames = opts.max_frames;
      FrameSet fs = archive_frames(&store, n, opts.model, ss, opts.encode_frames);
      n.content = std::move(fs.content);
      if (r.archive && n.id == *r.archive) r.frames = fs.to_json();
    }
}

/// The session's notes start the request, after the system run, under kNotesHeader.
void insert_notes(Store& store, const std::string& session, const RenderOptions& opts, Rendered& r) {
  auto notes = store.latest_of_kind(session, kind::kNotes, opts.as_of);
  if (!notes) return;
  std::size_t at = 0;
  while (at < r.items.size() && r.items[at].is_model_input() && r.items[at].role == role::kSystem) ++at;
  Json content = Json::array({Json{{"type", "text"}, {"text", kNotesHeader}}});
  for (auto& b : notes->content) content.push_back(std::move(b));
  notes->content = std::move(content);
  r.notes = notes->id;
  r.items.insert(r.items.begin() + static_cast<std::ptrdiff_t>(at), std::move(*notes));
}

}  // namespace ctxfold::render_detail
