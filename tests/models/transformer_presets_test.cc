// The model presets are files (models/presets/NAME.textproto) read as a user's model file is.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/embedded.h"
#include "models/transformer.h"

namespace ppsim {
namespace {

// Every field of every preset, written down from the C++ that built the presets before they were
// files (models/transformer.cc's MakePresets), which cited the same configs and papers as the
// files' comments do.
struct Expected {
  const char* name;
  int32_t layers;
  int64_t hidden, ffn_hidden;
  int32_t heads, kv_heads;
  int64_t vocab;
  bool tied_embeddings, swiglu;
  int64_t seq_len;
};

struct ExpectedMoe {
  int32_t experts, experts_per_token, shared_experts;
  int64_t expert_ffn_hidden;
  int32_t first_dense_layers;
  bool router_bias;
};

void ExpectSpec(const TransformerSpec& spec, const Expected& e, const ExpectedMoe& moe) {
  SCOPED_TRACE(e.name);
  EXPECT_EQ(spec.name, e.name);
  EXPECT_EQ(spec.layers, e.layers);
  EXPECT_EQ(spec.hidden, e.hidden);
  EXPECT_EQ(spec.ffn_hidden, e.ffn_hidden);
  EXPECT_EQ(spec.heads, e.heads);
  EXPECT_EQ(spec.kv_heads, e.kv_heads);
  EXPECT_EQ(spec.vocab, e.vocab);
  EXPECT_EQ(spec.tied_embeddings, e.tied_embeddings);
  EXPECT_EQ(spec.swiglu, e.swiglu);
  EXPECT_EQ(spec.seq_len, e.seq_len);
  EXPECT_EQ(spec.experts, moe.experts);
  EXPECT_EQ(spec.experts_per_token, moe.experts_per_token);
  EXPECT_EQ(spec.shared_experts, moe.shared_experts);
  EXPECT_EQ(spec.expert_ffn_hidden, moe.expert_ffn_hidden);
  EXPECT_EQ(spec.first_dense_layers, moe.first_dense_layers);
  EXPECT_EQ(spec.router_bias, moe.router_bias);
  if (spec.name != "deepseek-v3") {
    EXPECT_FALSE(spec.mla);
    EXPECT_EQ(spec.q_lora_rank + spec.kv_lora_rank + spec.qk_nope_head_dim + spec.qk_rope_head_dim +
                  spec.v_head_dim,
              0);
  }
}

TEST(TransformerPresetFiles, GiveEveryFieldAsBeforeInTheListOrder) {
  const ExpectedMoe dense{};
  const std::vector<std::pair<Expected, ExpectedMoe>> expected = {
      // GPT-3 shapes: f = 4h, every head its own KV head, GPT-2's vocabulary, tied.
      {{"gpt3-1.5b", 22, 2304, 9216, 24, 24, 50257, true, false, 1024}, dense},
      {{"gpt3-6.2b", 30, 4096, 16384, 32, 32, 50257, true, false, 1024}, dense},
      {{"gpt3-14.6b", 46, 5120, 20480, 40, 40, 50257, true, false, 1024}, dense},
      {{"gpt3-28.3b", 62, 6144, 24576, 48, 48, 50257, true, false, 1024}, dense},
      {{"gpt3-175b", 96, 12288, 49152, 96, 96, 50257, true, false, 2048}, dense},
      // Llama 3: 8 KV heads, vocabulary 128256, untied.
      {{"llama3-8b", 32, 4096, 14336, 32, 8, 128256, false, true, 8192}, dense},
      {{"llama3-8b-128k", 32, 4096, 14336, 32, 8, 128256, false, true, 131072}, dense},
      {{"llama3-70b", 80, 8192, 28672, 64, 8, 128256, false, true, 8192}, dense},
      {{"llama3-405b", 126, 16384, 53248, 128, 8, 128256, false, true, 8192}, dense},
      // Every layer MoE, experts of the model's ffn, no shared expert, no router bias.
      {{"mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, false, true, 32768},
       {8, 2, 0, 14336, 0, false}},
      {{"mixtral-8x22b", 56, 6144, 16384, 48, 8, 32768, false, true, 65536},
       {8, 2, 0, 16384, 0, false}},
      {{"dbrx", 40, 6144, 10752, 48, 8, 100352, false, true, 32768}, {16, 4, 0, 10752, 0, false}},
      {{"deepseek-v3", 61, 7168, 18432, 128, 128, 129280, false, true, 4096},
       {256, 8, 1, 2048, 3, true}},
  };
  ASSERT_TRUE(TransformerPresetsStatus().ok()) << TransformerPresetsStatus().message();
  const std::vector<TransformerSpec>& presets = TransformerPresets();
  ASSERT_EQ(presets.size(), expected.size());
  for (size_t i = 0; i < presets.size(); ++i) {
    ExpectSpec(presets[i], expected[i].first, expected[i].second);
  }
  // DeepSeek-V3's multi-head latent attention.
  const TransformerSpec& v3 = presets.back();
  EXPECT_TRUE(v3.mla);
  EXPECT_EQ(v3.q_lora_rank, 1536);
  EXPECT_EQ(v3.kv_lora_rank, 512);
  EXPECT_EQ(v3.qk_nope_head_dim, 128);
  EXPECT_EQ(v3.qk_rope_head_dim, 64);
  EXPECT_EQ(v3.v_head_dim, 128);
}

TEST(TransformerPresetFiles, AreTheSourceFilesWithTheirCitations) {
  const EmbeddedFiles files = TransformerPresetFiles();
  ASSERT_EQ(files.size(), TransformerPresets().size());
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string name = "models/" + std::string(files[i].name);
    SCOPED_TRACE(name);
    EXPECT_EQ(EmbeddedFileStem(files[i]), TransformerPresets()[i].name);
    std::ifstream in(std::string(PPSIM_SOURCE_DIR) + "/" + name, std::ios::binary);
    ASSERT_TRUE(in) << "cannot read the source file";
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), files[i].bytes);
    // Each begins with where its numbers come from.
    const std::string head = "# " + std::string(EmbeddedFileStem(files[i])) + ": ";
    EXPECT_EQ(files[i].bytes.substr(0, head.size()), head);
  }
}

TEST(TransformerPresetFiles, ABrokenFileIsAnInternalErrorLocatedInIt) {
  const EmbeddedFile broken{"presets/tiny.textproto",
                            "# tiny: no source.\n"
                            "name: \"tiny2\"\n"
                            "layers: 2\n"
                            "hidden: 100\n"
                            "heads: 3\n"
                            "vocab: 10\n"
                            "seq_len: 8\n"
                            "mlp: GELU\n"
                            "norm: LAYERNORM\n"
                            "tied_embeddings: true\n"};
  TransformerSpec spec;
  const Status status = ReadTransformerPresetFile(broken, &spec);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "the model preset tiny does not load (a bug in this build of ppsim):\n"
            "models/presets/tiny.textproto:2:7: name: 'tiny2' differs from the file's name, tiny\n"
            "models/presets/tiny.textproto:5:8: heads: 3 does not divide hidden 100");

  const EmbeddedFile unparsable{"presets/tiny.textproto", "name: \"tiny\"\nlayers: 2.5\n"};
  EXPECT_EQ(ReadTransformerPresetFile(unparsable, &spec).message(),
            "the model preset tiny does not load (a bug in this build of ppsim):\n"
            "models/presets/tiny.textproto:2:9: Expected integer, got: 2.5");
}

}  // namespace
}  // namespace ppsim
