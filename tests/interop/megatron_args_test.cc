#include "interop/megatron_args.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "base/files.h"

namespace ppsim {
namespace {

std::string DataPath(const std::string& name) {
  return std::string(PPSIM_SOURCE_DIR) + "/tests/data/megatron/" + name;
}

MegatronRun Read(const std::string& text) {
  MegatronRun run;
  const Status status = ReadMegatronArgs(text, "--megatron", &run);
  EXPECT_TRUE(status.ok()) << status.message();
  return run;
}

std::string Error(const std::string& text) {
  MegatronRun run;
  const Status status = ReadMegatronArgs(text, "--megatron", &run);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  return status.message();
}

// The value the arguments gave a ppsim field, "" when none.
std::string Setting(const MegatronRun& run, const std::string& field) {
  std::string value;
  for (const MegatronSetting& s : run.settings) {
    if (s.field == field) value = s.value;
  }
  return value;
}

std::string Notes(const MegatronRun& run) {
  std::string text;
  for (const std::string& note : run.notes) text += note + "\n";
  return text;
}

// A small model's arguments, for the error cases.
constexpr const char* kSmall =
    "--num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
    "--vocab-size 32000 --bf16 ";

TEST(MegatronArgs, Gpt3_175bScriptGivesMegatronsModelAndLayout) {
  const MegatronRun run = Read("@" + DataPath("gpt3_175b.args"));
  const TransformerSpec& m = run.model;
  EXPECT_EQ(m.layers, 96);
  EXPECT_EQ(m.hidden, 12288);
  EXPECT_EQ(m.heads, 96);
  EXPECT_EQ(m.kv_heads, 96);
  EXPECT_EQ(m.ffn_hidden, 4 * 12288);  // Megatron's default 4h
  // GPT-2 BPE's 50,257 tokens padded to a multiple of 128 x TP 8 = 1024: ceil(50257 / 1024) = 50.
  EXPECT_EQ(m.vocab, 51200);
  EXPECT_FALSE(m.swiglu);
  EXPECT_FALSE(m.rmsnorm);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.seq_len, 2048);
  // GPT's closed form: L(12h^2 + 13h) + Vh + sh (learned positions) + 2h (final LayerNorm):
  // python3: 96*(12*12288**2+13*12288) + 51200*12288 + 2048*12288 + 2*12288 = 174615846912.
  EXPECT_EQ(m.TotalParameters(), 174'615'846'912);
  EXPECT_EQ(Setting(run, "tp"), "8");
  EXPECT_EQ(Setting(run, "pp"), "16");
  EXPECT_EQ(Setting(run, "schedule"), "1F1B");
  EXPECT_EQ(Setting(run, "p2p_mode"), "megatron");
  EXPECT_EQ(Setting(run, "microbatch_size"), "1");
  EXPECT_EQ(Setting(run, "global_batch"), "1536");
  EXPECT_EQ(Setting(run, "seq_len"), "2048");
  EXPECT_EQ(Setting(run, "dtype"), "fp16");
  EXPECT_EQ(run.gpus_per_pipeline, 128);
  const std::string notes = Notes(run);
  EXPECT_NE(notes.find("--step-batch-size-schedule: a batch-size schedule; the steady state"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("ignored (no effect on an iteration's time or memory): "),
            std::string::npos);
  EXPECT_NE(notes.find("--lr,"), std::string::npos) << notes;
  EXPECT_NE(notes.find("--vocab-file and --merge-file without --tokenizer-type"),
            std::string::npos);
}

// Megatron-FSDP's sharding strategies as ZeRO stages.
TEST(MegatronArgs, MegatronFsdpStrategiesAreZeroStages) {
  std::string base;
  ASSERT_TRUE(ReadFile(DataPath("llama3_8b_h100_fp8.args"), &base).ok());
  const std::string fsdp = base + " --use-megatron-fsdp";
  EXPECT_EQ(Setting(Read(fsdp + " --data-parallel-sharding-strategy optim_grads_params"), "zero"),
            "3");
  EXPECT_EQ(Setting(Read(fsdp + " --data-parallel-sharding-strategy optim_grads"), "zero"), "2");
  EXPECT_EQ(Setting(Read(fsdp + " --data-parallel-sharding-strategy optim"), "zero"), "1");
  EXPECT_EQ(Setting(Read(fsdp), "zero"), "1");  // no_shard: the distributed optimizer's
  EXPECT_EQ(Error(base + " --data-parallel-sharding-strategy optim"),
            "--megatron: --data-parallel-sharding-strategy: applies with --use-megatron-fsdp");
  // PyTorch FSDP2 (Megatron's torch_fully_sharded_data_parallel.py): everything sharded.
  EXPECT_EQ(Setting(Read(base + " --use-torch-fsdp2"), "zero"), "3");
  EXPECT_EQ(Error(fsdp + " --use-torch-fsdp2"),
            "--megatron: --use-torch-fsdp2: --use-megatron-fsdp is given too; give one (both shard "
            "the data-parallel state)");
}

TEST(MegatronArgs, Llama3_8bFp8ScriptMatchesThePreset) {
  const MegatronRun run = Read("@" + DataPath("llama3_8b_h100_fp8.args"));
  const TransformerSpec* preset = FindTransformerPreset("llama3-8b");
  ASSERT_NE(preset, nullptr);
  EXPECT_EQ(run.model.layers, preset->layers);
  EXPECT_EQ(run.model.ffn_hidden, preset->ffn_hidden);
  EXPECT_EQ(run.model.kv_heads, preset->kv_heads);
  EXPECT_EQ(run.model.vocab, 128256);  // 128256 = 1002 x 128: no padding at TP 1
  EXPECT_TRUE(run.model.swiglu && run.model.rmsnorm && !run.model.tied_embeddings);
  // L(2h^2 + 2h x 1024 + 3h x 14336 + 2h) + 2Vh + h, python3: 8030261248.
  EXPECT_EQ(run.model.TotalParameters(), 8'030'261'248);
  EXPECT_EQ(run.model.TotalParameters(), preset->TotalParameters());
  EXPECT_EQ(Setting(run, "dtype"), "fp8");
  EXPECT_EQ(Setting(run, "grad_dtype"), "bf16");
  EXPECT_EQ(Setting(run, "zero"), "1");
  EXPECT_EQ(Setting(run, "tp"), "1");
  EXPECT_EQ(Setting(run, "pp"), "1");
  EXPECT_EQ(Setting(run, "global_batch"), "128");
  EXPECT_EQ(Setting(run, "seq_len"), "8192");
  EXPECT_EQ(Setting(run, "sequence_parallel"), "true");  // off at TP 1 by the request
  EXPECT_TRUE(run.overlap_grad_reduce);
  EXPECT_EQ(run.grad_bytes_per_param, 2);
  const std::string notes = Notes(run);
  EXPECT_NE(notes.find("--overlap-param-gather: "), std::string::npos);
  EXPECT_NE(notes.find("--fp8-param-gather: "), std::string::npos);
}

TEST(MegatronArgs, Mixtral8x7bScriptMatchesThePreset) {
  std::string text;
  ASSERT_TRUE(ReadFile(DataPath("mixtral_8x7b.args"), &text).ok());
  // Llama2Tokenizer's vocabulary is in its model file: without --vocab-size ppsim says so.
  EXPECT_NE(Error(text).find("--vocab-size: missing; the vocabulary of --tokenizer-type "
                             "Llama2Tokenizer is in its files"),
            std::string::npos);
  const MegatronRun run = Read(text + " --vocab-size 32000");
  const TransformerSpec* preset = FindTransformerPreset("mixtral-8x7b");
  ASSERT_NE(preset, nullptr);
  EXPECT_EQ(run.model.experts, 8);
  EXPECT_EQ(run.model.experts_per_token, 2);
  EXPECT_EQ(run.model.expert_ffn_hidden, 14336);
  EXPECT_EQ(run.model.first_dense_layers, 0);
  // L(2h^2 + 2h x 1024 + 8 x 3h x 14336 + 8h + 2h) + 2Vh + h, python3: 46702792704 (Mixtral's
  // config.json count).
  EXPECT_EQ(run.model.TotalParameters(), 46'702'792'704);
  EXPECT_EQ(run.model.TotalParameters(), preset->TotalParameters());
  EXPECT_EQ(Setting(run, "pp"), "4");
  EXPECT_EQ(Setting(run, "ep"), "8");
  EXPECT_EQ(Setting(run, "global_batch"), "256");
  EXPECT_EQ(Setting(run, "dtype"), "bf16");
  EXPECT_EQ(run.gpus_per_pipeline, 4);
}

TEST(MegatronArgs, BridgeLayoutForLlama3_70bGivesPerStageLayers) {
  const MegatronRun run = Read(
      "--num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 --num-attention-heads 64 "
      "--group-query-attention --num-query-groups 8 --seq-length 8192 --swiglu "
      "--normalization RMSNorm --position-embedding-type rope "
      "--untie-embeddings-and-output-weights --disable-bias-linear --vocab-size 128256 --bf16 "
      "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 "
      "--pipeline-model-parallel-layout 'Et*2|(t*2|)*34,t*3|(t*2|)*3,tL' "
      "--micro-batch-size 1 --global-batch-size 128");
  // Stage 0 "Et*2" and 34 x "t*2": 35 stages of 2; "t*3"; 3 x "t*2"; "tL": 40 = PP 8 x VP 5.
  std::string expected;
  for (int i = 0; i < 35; ++i) expected += "2,";
  expected += "3,2,2,2,1";
  EXPECT_EQ(Setting(run, "layers_per_stage"), expected);
  EXPECT_EQ(Setting(run, "schedule"), "Megatron-Interleaved");
  EXPECT_EQ(Setting(run, "stages_per_rank"), "5");
  // 128256 padded to a multiple of 128 x 4 = 512: ceil(128256 / 512) x 512 = 251 x 512.
  EXPECT_EQ(run.model.vocab, 128512);
}

TEST(MegatronArgs, DerivesWhatMegatronDerives) {
  // SwiGLU's default FFN: int((4h x 2/3) / 64) x 64, python3: int((4*1024*2/3)/64)*64 = 2688.
  MegatronRun run = Read(std::string(kSmall) +
                         "--swiglu --normalization RMSNorm "
                         "--position-embedding-type rope "
                         "--disable-bias-linear");
  EXPECT_EQ(run.model.ffn_hidden, 2688);
  EXPECT_EQ(run.model.vocab, 32000);             // 250 x 128
  EXPECT_EQ(Setting(run, "microbatches"), "1");  // no global batch: mbs x dp
  // --group-query-attention alone: one group.
  run = Read(std::string(kSmall) + "--group-query-attention");
  EXPECT_EQ(run.model.kv_heads, 1);
  // Uneven first and last ranks: (4 + ... ) the rest evenly; VP 2 halves each rank's layers.
  run = Read(
      "--num-layers 12 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--vocab-size 32000 --bf16 --pipeline-model-parallel-size 4 "
      "--num-virtual-stages-per-pipeline-rank 2 --decoder-first-pipeline-num-layers 2 "
      "--decoder-last-pipeline-num-layers 2");
  // 12 - 2 - 2 = 8 over 2 middle ranks: 4 each; ranks 2, 4, 4, 2, each split over 2 stages, in
  // the order vpp x PP + pp: 1,2,2,1 then 1,2,2,1.
  EXPECT_EQ(Setting(run, "layers_per_stage"), "1,2,2,1,1,2,2,1");
  // Megatron's list syntax for --moe-layer-freq: 3 dense layers, then 58 MoE.
  run = Read(
      "--num-layers 61 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--vocab-size 32000 --bf16 --swiglu --num-experts 8 --moe-ffn-hidden-size 512 "
      "--moe-layer-freq '([0]*3+[1]*58)' --moe-shared-expert-intermediate-size 1024");
  EXPECT_EQ(run.model.first_dense_layers, 3);
  EXPECT_EQ(run.model.shared_experts, 2);
  // --recompute-activations is selective; full with uniform is every layer.
  run = Read(std::string(kSmall) + "--recompute-activations");
  EXPECT_EQ(Setting(run, "recompute"), "selective");
  run = Read(std::string(kSmall) +
             "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  EXPECT_EQ(Setting(run, "recompute"), "full");
  EXPECT_EQ(Setting(run, "recompute_method"), "");
  // Megatron's modules pass by name (checked against the model with the run); partial full
  // recomputation keeps its method and N; block N covering every stage's layers is every layer.
  run = Read(std::string(kSmall) +
             "--recompute-granularity selective --recompute-modules core_attn mlp layernorm");
  EXPECT_EQ(Setting(run, "recompute"), "selective");
  EXPECT_EQ(Setting(run, "recompute_modules"), "core_attn,mlp,layernorm");
  run = Read(std::string(kSmall) +
             "--recompute-granularity full --recompute-method block --recompute-num-layers 2");
  EXPECT_EQ(Setting(run, "recompute_method"), "block");
  EXPECT_EQ(Setting(run, "recompute_num_layers"), "2");
  run = Read(std::string(kSmall) +
             "--recompute-granularity full --recompute-method uniform --recompute-num-layers 2");
  EXPECT_EQ(Setting(run, "recompute_method"), "uniform");
  run = Read(std::string(kSmall) +
             "--recompute-granularity full --recompute-method block --recompute-num-layers 4");
  EXPECT_EQ(Setting(run, "recompute_method"), "");
  // --fp8-recipe mxfp8 is Blackwell's MXFP8.
  run = Read(std::string(kSmall) + "--fp8-format hybrid --fp8-recipe mxfp8");
  EXPECT_EQ(Setting(run, "dtype"), "mxfp8");
  run = Read(std::string(kSmall) + "--fp8-format hybrid --fp8-recipe tensorwise");
  EXPECT_EQ(Setting(run, "dtype"), "fp8");
}

// Fine-grained activation offloading: the module list passes by name with the switch; without it
// Megatron ignores the list (a note says so); the switch alone is refused, as Megatron asserts.
TEST(MegatronArgs, FineGrainedActivationOffloading) {
  MegatronRun run =
      Read(std::string(kSmall) +
           "--fine-grained-activation-offloading --offload-modules core_attn attn_proj");
  EXPECT_EQ(Setting(run, "offload_modules"), "core_attn,attn_proj");
  run = Read(std::string(kSmall) + "--offload-modules core_attn");
  EXPECT_EQ(Setting(run, "offload_modules"), "");
  EXPECT_NE(Notes(run).find("--offload-modules: no effect without "
                            "--fine-grained-activation-offloading"),
            std::string::npos);
  EXPECT_EQ(
      Error(std::string(kSmall) + "--fine-grained-activation-offloading"),
      "--megatron: --fine-grained-activation-offloading: needs --offload-modules, as Megatron "
      "asserts (valid: attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1, "
      "moe_act)");
}

TEST(MegatronArgs, BadInputIsLocated) {
  const std::string path = testing::TempDir() + "/bad.args";
  {
    std::ofstream out(path);
    out << "--num-layers 4\n--hidden-size 1024\n  --hidden-sise 3\n";
  }
  EXPECT_EQ(Error("@" + path)
                .rfind(path + ":3:3: --hidden-sise: unknown Megatron-LM argument; "
                              "did you mean --hidden-size?",
                       0),
            0u)
      << Error("@" + path);
  std::remove(path.c_str());
  EXPECT_EQ(Error(std::string(kSmall) + "--micro-batch-size"),
            "--megatron: --micro-batch-size: missing value; --micro-batch-size takes one value");
  EXPECT_EQ(Error(std::string(kSmall) + "--micro-batch-size x"),
            "--megatron: --micro-batch-size: expected a whole number, got 'x'");
  EXPECT_EQ(Error(std::string(kSmall) + "--tensor-model-parallel-size 3"),
            "--megatron: --tensor-model-parallel-size: 3 does not divide the 16 attention heads "
            "(--num-attention-heads); Megatron asserts it does");
  EXPECT_NE(Error("--num-layers 4 --hidden-size 8 --num-attention-heads 2 --seq-length 8 "
                  "--vocab-size 8")
                .find("--megatron: --bf16: missing"),
            std::string::npos);
  EXPECT_EQ(Error(std::string(kSmall) + "--recompute-granularity full"),
            "--megatron: --recompute-method: missing; Megatron requires uniform or block with "
            "--recompute-granularity full");
  EXPECT_NE(Error(std::string(kSmall) +
                  "--recompute-granularity full --recompute-method slab --recompute-num-layers 2")
                .find("--recompute-method"),
            std::string::npos);
  EXPECT_NE(Error("").find("no arguments"), std::string::npos);
  EXPECT_NE(Error("stray").find("'stray': expected a Megatron-LM argument"), std::string::npos);
}

TEST(MegatronArgs, CpCommTypeIsOneTypeForEveryLayer) {
  const std::string cp = std::string(kSmall) + "--context-parallel-size 2 ";
  EXPECT_EQ(Setting(Read(cp), "cp_comm_type"), "");
  EXPECT_EQ(Setting(Read(cp + "--cp-comm-type a2a"), "cp_comm_type"), "a2a");
  EXPECT_EQ(
      Setting(Read(cp + "--cp-comm-type allgather allgather allgather allgather"), "cp_comm_type"),
      "allgather");
  EXPECT_EQ(Error(cp + "--cp-comm-type p2p p2p a2a p2p"),
            "--megatron: --cp-comm-type: layers of different types ('p2p', 'a2a') are not "
            "modelled; give one type for every layer");
}

TEST(MegatronArgs, MtpNumLayersIsTheModelsMtpLayers) {
  // --mtp-num-layers N: N MTP modules on the last stage; a layout must put its m there.
  EXPECT_EQ(Read(kSmall).model.mtp_layers, 0);
  EXPECT_EQ(Read(std::string(kSmall) + "--mtp-num-layers 1").model.mtp_layers, 1);
  EXPECT_NE(Error(std::string(kSmall) + "--mtp-num-layers -1").find("--mtp-num-layers"),
            std::string::npos);
  const std::string pp2 =
      std::string(kSmall) + "--pipeline-model-parallel-size 2 --mtp-num-layers 1 ";
  EXPECT_EQ(Read(pp2 + "--pipeline-model-parallel-layout 'Et*2|t*2mL'").model.mtp_layers, 1);
  EXPECT_EQ(Error(pp2 + "--pipeline-model-parallel-layout 'Et|t|t*2m|L'"),
            "--megatron: --pipeline-model-parallel-layout: MTP layers (m) outside the pipeline's "
            "last stage are not modelled; ppsim places them with the loss (L)");
}

TEST(MegatronArgs, HierarchicalContextParallelSizes) {
  // Megatron-core: the first size is the a2a group, the second the p2p ring; their product must
  // be --context-parallel-size, and a2a+p2p needs them.
  const std::string cp = std::string(kSmall) + "--context-parallel-size 4 ";
  const MegatronRun run =
      Read(cp + "--cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 2");
  EXPECT_EQ(Setting(run, "cp_comm_type"), "a2a+p2p");
  EXPECT_EQ(Setting(run, "cp_a2a_size"), "2");
  // With another type the sizes have no effect (Megatron only checks their product).
  EXPECT_EQ(Setting(Read(cp + "--hierarchical-context-parallel-sizes 4 1"), "cp_a2a_size"), "");
  EXPECT_EQ(Error(cp + "--cp-comm-type a2a+p2p"),
            "--megatron: --cp-comm-type: a2a+p2p needs --hierarchical-context-parallel-sizes A B, "
            "as Megatron asserts");
  EXPECT_EQ(Error(cp + "--cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 4"),
            "--megatron: --hierarchical-context-parallel-sizes: expected two sizes A B (the a2a "
            "group, the p2p ring) whose product is --context-parallel-size 4, as Megatron asserts");
  EXPECT_EQ(Error(cp + "--hierarchical-context-parallel-sizes 2 x"),
            "--megatron: --hierarchical-context-parallel-sizes: expected whole numbers from 1 to "
            "--context-parallel-size 4, got 'x'");
  EXPECT_EQ(Error(cp + "--hierarchical-context-parallel-sizes 1 2 2"),
            "--megatron: --hierarchical-context-parallel-sizes: expected two sizes A B (the a2a "
            "group, the p2p ring) whose product is --context-parallel-size 4, as Megatron asserts");
}

TEST(MegatronArgs, EpAllToAllOverlapFlagsAreApplied) {
  // Megatron's own rules for them (ep > 1, a virtual pipeline with pp > 1) are the request's.
  const MegatronRun run =
      Read(std::string(kSmall) + "--overlap-moe-expert-parallel-comm --delay-wgrad-compute");
  EXPECT_EQ(Setting(run, "overlap_moe_expert_parallel_comm"), "true");
  EXPECT_EQ(Setting(run, "delay_wgrad_compute"), "true");
  EXPECT_EQ(Setting(Read(kSmall), "overlap_moe_expert_parallel_comm"), "");
}

TEST(MegatronArgs, FlagHintNamesPpsimsFlagAndMegatron) {
  EXPECT_EQ(MegatronFlagHint("--tensor-model-parallel-size"),
            "--tensor-model-parallel-size is Megatron-LM's; ppsim's flag is --tp, or pass "
            "Megatron-LM arguments whole with --megatron '--tensor-model-parallel-size ...' (or "
            "--megatron @FILE)");
  EXPECT_EQ(MegatronFlagHint("--no-such-flag"), "");
  // docs/usage.md's mapping table (Megatron-LM arguments in) names every row.
  std::string readme;
  ASSERT_TRUE(ReadFile(std::string(PPSIM_SOURCE_DIR) + "/docs/usage.md", &readme).ok());
  // Every row's flag is a long option, once.
  std::set<std::string_view> seen;
  for (const MegatronArgument& row : MegatronArguments()) {
    EXPECT_TRUE(row.flag.starts_with("--")) << row.flag;
    EXPECT_TRUE(seen.insert(row.flag).second) << row.flag;
    EXPECT_NE(readme.find("`" + std::string(row.flag) + "`"), std::string::npos) << row.flag;
  }
}

}  // namespace
}  // namespace ppsim
