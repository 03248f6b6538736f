// The model catalog (docs/models.md): the clients' current default models are known with the
// clients' own windows, the first-party ids transcripts record resolve through aliases, and a model
// the catalog does not list is reported as unknown with the releases the catalog is as of.
#include <gtest/gtest.h>

#include "catalog/models.hpp"

namespace ctxfold {
namespace {

TEST(ModelCatalog, KnowsTheClientsCurrentDefaultModels) {
  ModelInfo opus = lookup_model("claude-opus-5-5");
  EXPECT_TRUE(opus.known);
  EXPECT_EQ(opus.provider, "anthropic");
  EXPECT_EQ(opus.source, "claude-code");
  EXPECT_EQ(opus.context_window, std::int64_t(1000000));
  EXPECT_EQ(opus.max_output_tokens, std::int64_t(128000));
  ModelInfo gpt = lookup_model("gpt-5.5");
  EXPECT_TRUE(gpt.known);
  EXPECT_EQ(gpt.source, "codex");
  EXPECT_EQ(gpt.context_window, std::int64_t(272000));
  ModelInfo gem = lookup_model("gemini-3-pro-preview");
  EXPECT_TRUE(gem.known);
  EXPECT_EQ(gem.source, "gemini-cli");
  EXPECT_EQ(gem.context_window, std::int64_t(1048576));
}

TEST(ModelCatalog, TheOneMillionBetaIsTheMaximumNotTheDefaultWindow) {
  ModelInfo sonnet = lookup_model("claude-sonnet-4-6");
  EXPECT_EQ(sonnet.context_window, std::int64_t(200000));
  EXPECT_EQ(sonnet.max_context_window, std::int64_t(1000000));
}

TEST(ModelCatalog, FirstPartyIdsResolveThroughAliases) {
  // Claude Code records provider_ids.first_party, which for Sonnet 4 is not "<alias>-<date>".
  ModelInfo s4 = lookup_model("claude-sonnet-4-20250514");
  EXPECT_TRUE(s4.known);
  EXPECT_EQ(s4.entry, "claude-sonnet-4-0");
  EXPECT_EQ(s4.id, "claude-sonnet-4-20250514");
  EXPECT_EQ(lookup_model("claude-sonnet-4-5-20250929").entry, "claude-sonnet-4-5");
}

TEST(ModelCatalog, AnUnknownModelSaysTheCatalogMayBeStale) {
  ModelInfo m = lookup_model("gpt-5.3-codex");
  EXPECT_FALSE(m.known);
  EXPECT_FALSE(m.context_window);
  EXPECT_TRUE(m.entry.empty());
  const std::string as_of = catalog_as_of();
  EXPECT_NE(as_of.find("Claude Code "), std::string::npos) << as_of;
  EXPECT_NE(as_of.find("Codex CLI "), std::string::npos) << as_of;
  EXPECT_NE(as_of.find("Gemini CLI "), std::string::npos) << as_of;
  const std::string note = unknown_model_note(m);
  EXPECT_NE(note.find("'gpt-5.3-codex'"), std::string::npos) << note;
  EXPECT_NE(note.find(as_of), std::string::npos) << note;
  EXPECT_NE(note.find("a newer model needs a newer catalog"), std::string::npos) << note;
  EXPECT_EQ(unknown_model_note(lookup_model("gpt-5.5")), "");
}

}  // namespace
}  // namespace ctxfold
