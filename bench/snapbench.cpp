// snapcompact frame throughput (bench/snapcompact.sh): lays out a text file as an archive for one
// model's geometry, draws and PNG-encodes every frame, and prints one JSON object with frames/s
// and bytes per frame (the inline-data frame budget assumes about 50 KB a frame).
#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "snapcompact/archive.hpp"
#include "snapcompact/frames.hpp"
#include "util/json.hpp"
#include "session/open.hpp"

int main(int argc, char** argv) {
  CLI::App app{"ctxfold-snapbench: draw and encode every frame of a text file"};
  std::string path, model;
  int runs = 3;
  std::string db, archive;
  int max_frames = 80;
  app.add_option("--db", db, "also time archive_frames on this database's archive: cache vs drawing");
  app.add_option("--archive", archive, "the archive node id (with --db)");
  app.add_option("--max-frames", max_frames, "frame budget for the --db timing");
  app.add_option("file", path, "archive text")->required();
  app.add_option("--model", model, "catalog model id (geometry)");
  app.add_option("--runs", runs, "best of N");
  CLI11_PARSE(app, argc, argv);
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  using namespace ctxfold;
  using clock = std::chrono::steady_clock;
  const FrameGeometry g = frame_geometry(lookup_model(model));
  double best = 1e300, best_layout = 1e300;
  std::size_t frames = 0, png_bytes = 0;
  std::int64_t missing = 0;
  for (int r = 0; r < runs; ++r) {
    auto t0 = clock::now();
    auto rows = layout_rows(text, g.columns);
    auto fr = split_frames(text, rows, g);
    auto t1 = clock::now();
    std::size_t bytes = 0;
    std::int64_t miss = 0;
    for (const auto& f : fr) bytes += encode_png(draw_frame(text, rows, f, g, &miss)).size();
    auto t2 = clock::now();
    best = std::min(best, std::chrono::duration<double>(t2 - t0).count());
    best_layout = std::min(best_layout, std::chrono::duration<double>(t1 - t0).count());
    frames = fr.size();
    png_bytes = bytes;
    missing = miss;
  }
  Json out{{"schema", "ctxfold.bench-snapframes/1"},
           {"text_bytes", text.size()},
           {"geometry", g.key()},
           {"frame_px", std::to_string(g.width()) + "x" + std::to_string(g.full_height())},
           {"frames", frames},
           {"seconds", best},
           {"layout_seconds", best_layout},
           {"frames_per_second", frames / best},
           {"png_bytes_per_frame", frames ? png_bytes / frames : 0},
           {"vs_seed_50kb", frames ? static_cast<double>(png_bytes) / frames / 50000.0 : 0.0},
           {"missing_glyphs", missing}};
  if (!db.empty()) {
    // The frames of one render, as render_context builds them: read from the cache vs drawn.
    Store store = open_store(db, Store::Mode::read_only);
    auto node = store.node(archive, false);
    if (!node) {
      std::cerr << "no archive " << archive << "\n";
      return 1;
    }
    SnapSettings ss{std::int64_t(100000000), 20, max_frames};
    auto time = [&](Store* st) {
      double b = 1e300;
      std::size_t cached = 0;
      for (int r = 0; r < runs; ++r) {
        auto t0 = clock::now();
        FrameSet fs = archive_frames(st, *node, model, ss, true);
        b = std::min(b, std::chrono::duration<double>(clock::now() - t0).count());
        cached = 0;
        for (const auto& f : fs.frames) cached += f.cached;
      }
      return std::make_pair(b, cached);
    };
    auto [tc, nc] = time(&store);
    auto [tu, nu] = time(nullptr);
    out["frames_of_a_render"] = Json{{"cached_seconds", tc}, {"cached_frames", nc}, {"drawn_seconds", tu},
                                     {"drawn_frames_cached", nu}, {"drawn_over_cached", tu / tc}};
  }
  std::cout << out.dump() << "\n";
  return 0;
}
