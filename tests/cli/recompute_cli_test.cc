// Megatron's recomputation modules and MXFP8 from the command line: refusals (exit 2) and
// DeepSeek-V3's H100 recipe of the Megatron MoE model zoo, which fits on 80 GB.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli.h"

namespace ppsim {
namespace {

const std::string kRecipe =
    "@" + std::string(PPSIM_SOURCE_DIR) + "/tests/data/megatron/deepseek_v3_h100_modelzoo.args";

TEST(RecomputeCli, InvalidCombinationsExit2) {
  const std::vector<std::string> llama = {"run", "--model", "llama3-8b", "--pp", "4",
                                          "--schedule", "1F1B", "--microbatches", "8"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = llama;
    args.insert(args.end(), more.begin(), more.end());
    return Cli(args);
  };
  CliResult r = with({"--recompute-modules", "mla_up_proj"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--recompute-modules: mla_up_proj needs multi-head latent attention; "
                       "llama3-8b has none"),
            std::string::npos)
      << r.err;
  r = with({"--recompute-modules", "moe"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("moe needs a model with experts"), std::string::npos) << r.err;
  r = with({"--recompute-modules", "attn"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--recompute-modules: unknown module 'attn'; valid: core_attn, mlp, moe, "
                       "moe_act, layernorm, mla_up_proj, shared_experts"),
            std::string::npos)
      << r.err;
  r = with({"--recompute", "full", "--recompute-modules", "mlp"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("applies to selective recomputation"), std::string::npos) << r.err;
  r = with({"--recompute-method", "slab", "--recompute-num-layers", "2"});
  EXPECT_EQ(r.code, 2);
  r = with({"--recompute-method", "block"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--recompute-num-layers: must be at least 1"), std::string::npos) << r.err;
}

TEST(RecomputeCli, Mxfp8NeedsBlackwell) {
  CliResult r = Cli({"run", "--model", "llama3-8b", "--pp", "4", "--schedule", "1F1B",
                     "--microbatches", "8", "--platform", "dgx-h100", "--dtype", "mxfp8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--dtype: mxfp8 needs a Blackwell GPU (MXFP8 tensor cores); H100 SXM of "
                       "dgx-h100 has none (gpu.mxfp8); GPUs that do: B200, GB200, GB300"),
            std::string::npos)
      << r.err;
  r = Cli({"run", "--model", "llama3-8b", "--pp", "4", "--schedule", "1F1B", "--microbatches",
           "8", "--platform", "dgx-b200", "--dtype", "mxfp8"});
  EXPECT_EQ(r.code, 0) << r.err;
}

// yanring/Megatron-MoE-ModelZoo best_practice/DeepSeekV3/run.sh: "best config on 1024 H100 GPUs
// with 4096 sequence lengths" (TP 2, PP 8, VPP 4, EP 64, FP8, --recompute-modules mla_up_proj mlp),
// run on 80 GB H100s. 16 microbatches (--global-batch 1024 over dp 64) reach rank 0's warm-up of
// (pp - 1) x 2 + (vp - 1) x pp = 38 chunks, the peak of the recipe's 128.
TEST(RecomputeCli, DeepSeekV3ModelZooRecipeFitsOnH100) {
  const std::vector<std::string> run = {"run",     "--megatron",        kRecipe,
                                        "--platform", "dgx-h100",       "--nodes",
                                        "128",     "--global-batch",    "1024",
                                        "--engine", "critical-path",    "--fail-on-oom"};
  CliResult r = Cli(run);
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("recompute selective (mlp,mla_up_proj)"), std::string::npos) << r.out;
  // Without the modules (core_attn, Megatron's default) the same run does not fit.
  std::vector<std::string> core_attn = run;
  core_attn.insert(core_attn.end(), {"--recompute-modules", "core_attn"});
  r = Cli(core_attn);
  EXPECT_EQ(r.code, 1) << r.err << r.out;
}

}  // namespace
}  // namespace ppsim
