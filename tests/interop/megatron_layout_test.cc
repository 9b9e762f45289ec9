#include "interop/megatron_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ppsim {
namespace {

constexpr const char* kWhere = "--pipeline-model-parallel-layout";

MegatronLayout Parse(const std::string& text, int32_t pp, int32_t layers, int32_t mtp = 0) {
  MegatronLayout layout;
  const Status status = ParseMegatronLayout(text, pp, layers, mtp, kWhere, &layout);
  EXPECT_TRUE(status.ok()) << status.message();
  return layout;
}

std::string Error(const std::string& text, int32_t pp, int32_t layers, int32_t mtp = 0) {
  MegatronLayout layout;
  const Status status = ParseMegatronLayout(text, pp, layers, mtp, kWhere, &layout);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  return status.message();
}

TEST(MegatronLayout, UnrollsMegatronBridgesLlama3_70bLayoutForPp8Vp5) {
  // Megatron-Bridge's Llama 3 70B layout (issue 29): "Et*2|" then 34 x "t*2|", "t*3|", 3 x "t*2|",
  // "tL" -> 1 + 34 + 1 + 3 + 1 = 40 stages = PP 8 x VP 5; 2 + 68 + 3 + 6 + 1 = 80 decoder layers.
  const MegatronLayout layout = Parse("Et*2|(t*2|)*34,t*3|(t*2|)*3,tL", 8, 80);
  EXPECT_EQ(layout.virtual_stages_per_rank, 5);
  std::vector<int32_t> expected = {2};
  expected.insert(expected.end(), 34, 2);
  expected.push_back(3);
  expected.insert(expected.end(), 3, 2);
  expected.push_back(1);
  EXPECT_EQ(layout.decoder_layers, expected);
  EXPECT_EQ(layout.mtp_layers, std::vector<int32_t>(40, 0));
}

TEST(MegatronLayout, PlacesDeepSeekV3sMtpLayerAsMegatronsDocumentationDoes) {
  // Megatron's docs (pipeline_parallel_layout.md): DeepSeek-V3, 61 decoder layers + 1 MTP layer,
  // PP 16 x VPP 2 as "Et*3|(tt|)*29,m|L": stage 0 embedding + 3 decoders, stages 1-29 two each,
  // stage 30 (rank 14's second) the MTP layer, stage 31 (rank 15's second) the loss.
  const MegatronLayout layout = Parse("Et*3|(tt|)*29,m|L", 16, 61, 1);
  EXPECT_EQ(layout.virtual_stages_per_rank, 2);
  std::vector<int32_t> decoders = {3};
  decoders.insert(decoders.end(), 29, 2);
  decoders.insert(decoders.end(), {0, 0});
  EXPECT_EQ(layout.decoder_layers, decoders);
  std::vector<int32_t> mtp(32, 0);
  mtp[30] = 1;
  EXPECT_EQ(layout.mtp_layers, mtp);
}

TEST(MegatronLayout, RepeatsAsMegatronsRegularExpressionsDo) {
  // "(|t)*2" unrolls to "|t|t"; "t|*2" to "t||" (any one character repeats); commas vanish.
  EXPECT_EQ(Parse("Et(|t)*2,L", 3, 3).decoder_layers, (std::vector<int32_t>{1, 1, 1}));
  EXPECT_EQ(Parse("Et|*2tL", 3, 2).decoder_layers, (std::vector<int32_t>{1, 0, 1}));
  // x*0 is no x: an empty stage.
  EXPECT_EQ(Parse("Et|t*0|tL", 3, 2).decoder_layers, (std::vector<int32_t>{1, 0, 1}));
}

TEST(MegatronLayout, RefusesWhatMegatronRefusesWithWhatIsValid) {
  EXPECT_EQ(Error("Etx|tL", 2, 2),
            "--pipeline-model-parallel-layout: 'x' in stage 0 is not a layer; valid: E "
            "(embedding), L (loss), t (decoder layer), m (MTP layer), | between stages, (...)*n "
            "and x*n to repeat, commas ignored");
  // A nested group leaves a parenthesis behind, as in Megatron.
  EXPECT_EQ(Error("E((t)*2)*2|L", 2, 4),
            "--pipeline-model-parallel-layout: '(' in stage 0 is not a layer; valid: E "
            "(embedding), L (loss), t (decoder layer), m (MTP layer), | between stages, (...)*n "
            "and x*n to repeat, commas ignored");
  EXPECT_EQ(Error("Et|t|tL", 2, 3),
            "--pipeline-model-parallel-layout: 3 stages are not a multiple of the 2 pipeline "
            "ranks; give V x 2 stages separated by |");
  EXPECT_EQ(Error("tE|tL", 2, 2),
            "--pipeline-model-parallel-layout: the embedding (E) must be the first layer of "
            "stage 0, exactly once; got 1");
  EXPECT_EQ(Error("Et|LtL", 2, 2),
            "--pipeline-model-parallel-layout: the loss (L) must be the last layer of the last "
            "stage, exactly once; got 2");
  EXPECT_EQ(Error("Et|tL", 2, 80),
            "--pipeline-model-parallel-layout: 2 decoder layers (t); the model has 80");
  EXPECT_EQ(Error("Et|tmL", 2, 2),
            "--pipeline-model-parallel-layout: 1 MTP layers (m); the model has 0");
  EXPECT_EQ(Error("Etm|tL", 2, 2, 1),
            "--pipeline-model-parallel-layout: a decoder layer (t) after an MTP layer (m); "
            "decoder layers come before MTP layers");
  EXPECT_EQ(Error("Et|m|t|L", 2, 2, 1),
            "--pipeline-model-parallel-layout: a decoder layer (t) after an MTP layer (m); "
            "decoder layers come before MTP layers");
  EXPECT_EQ(Error("Et|tm||L", 2, 2, 1),
            "--pipeline-model-parallel-layout: 1 MTP layers (m) in stage 1 (rank 1's virtual "
            "stage 0); all 1 go in one stage, the last virtual stage of a rank");
}

TEST(MegatronLayout, RefusesAnUnrollingPastTheLimitBeforeBuildingIt) {
  EXPECT_EQ(Error("E(tttt)*999999999999|L", 2, 4),
            "--pipeline-model-parallel-layout: unrolls to more than 1000000 layers and stage "
            "separators; a model has at most 100000 layers");
  EXPECT_EQ(Error("Et*1000001|L", 2, 4),
            "--pipeline-model-parallel-layout: unrolls to more than 1000000 layers and stage "
            "separators; a model has at most 100000 layers");
}

}  // namespace
}  // namespace ppsim
