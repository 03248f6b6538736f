// model/strategy_label: the one table of strategy names, and the rolling rule it encodes for
// metadata.strategy (absent or null reads as rolling; docs/architecture.md "Strategy names live in
// one table").
#include <gtest/gtest.h>

#include "model/node.hpp"
#include "model/strategy_label.hpp"

namespace ctxfold {
namespace {

TEST(StrategyLabelTest, EveryLabelRoundTripsThroughItsName) {
  for (StrategyLabel l : {StrategyLabel::rolling, StrategyLabel::lcm, StrategyLabel::snapcompact, StrategyLabel::notes,
                          StrategyLabel::region}) {
    ASSERT_TRUE(parse_label(label_name(l)).has_value()) << label_name(l);
    EXPECT_EQ(*parse_label(label_name(l)), l);
  }
  EXPECT_EQ(label_name(StrategyLabel::snapcompact), "snapcompact");
  EXPECT_FALSE(parse_label("raw"));       // a view policy, not a label
  EXPECT_FALSE(parse_label("Rolling"));   // names are exact
  EXPECT_FALSE(parse_label(""));
}

TEST(StrategyLabelTest, MetadataWithoutAStrategyReadsAsRolling) {
  EXPECT_EQ(strategy_label(Json::object()), StrategyLabel::rolling);
  EXPECT_EQ(strategy_label(Json{{"strategy", nullptr}}), StrategyLabel::rolling);
  EXPECT_EQ(strategy_label(Json{{"strategy", "lcm"}}), StrategyLabel::lcm);
  EXPECT_FALSE(strategy_label(Json{{"strategy", "mystery"}}));
  EXPECT_FALSE(strategy_label(Json{{"strategy", 3}}));  // not a string: no label, not rolling
  EXPECT_TRUE(has_label(Json{{"origin", "import"}}, StrategyLabel::rolling));
  EXPECT_FALSE(has_label(Json{{"strategy", "region"}}, StrategyLabel::rolling));
  EXPECT_TRUE(has_label(Json{{"strategy", "region"}}, StrategyLabel::region));
}

TEST(StrategyLabelTest, RollingSummaryIsASummaryLabelledRollingOrUnlabelled) {
  Node n;
  n.kind = kind::kSummary;
  EXPECT_TRUE(is_rolling_summary(n));
  n.metadata = Json{{"strategy", "rolling"}};
  EXPECT_TRUE(is_rolling_summary(n));
  n.metadata = Json{{"strategy", "lcm"}};
  EXPECT_FALSE(is_rolling_summary(n));
  n.metadata = Json{{"strategy", true}};
  EXPECT_FALSE(is_rolling_summary(n));
  n.metadata = Json::object();
  n.kind = kind::kArchive;
  EXPECT_FALSE(is_rolling_summary(n));
}

}  // namespace
}  // namespace ctxfold
