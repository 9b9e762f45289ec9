#include "interop/torchtitan_toml.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace ppsim {
namespace {

const std::string kData = std::string(PPSIM_SOURCE_DIR) + "/tests/data/torchtitan/";

// The settings of a job file as field -> value (SOURCES.md cites the files; *_ddp and *_pp are
// edited copies).
std::map<std::string, std::string> Settings(const std::string& name, int64_t world,
                                            TorchtitanJob* job_out = nullptr) {
  TorchtitanJob job;
  const Status status = ReadTorchtitanFile(kData + name, world, &job);
  EXPECT_TRUE(status.ok()) << status.message();
  std::map<std::string, std::string> settings;
  for (const TorchtitanSetting& s : job.settings) settings[s.field] = s.value;
  if (job_out != nullptr) *job_out = job;
  return settings;
}

std::string FileError(const std::string& name, int64_t world) {
  TorchtitanJob job;
  return ReadTorchtitanFile(kData + name, world, &job).message();
}

std::string TextError(const std::string& text, int64_t world = 8) {
  TorchtitanJob job;
  return ReadTorchtitanToml(text, "job.toml", world, "", &job).message();
}

// torchtitan's own files leave data_parallel_shard_degree at -1: the rest of the world, which
// is FSDP2 (parallelize.py apply_fsdp): ZeRO-3 over all the data-parallel GPUs.
TEST(TorchtitanToml, RealFilesRunFsdp) {
  // llama3_405b.toml on 128 GPUs: tp 8 -> 16 shards, no replication.
  auto s = Settings("llama3_405b.toml", 128);
  EXPECT_EQ(s.at("dp"), "16");
  EXPECT_EQ(s.at("tp"), "8");
  EXPECT_EQ(s.at("zero"), "3");
  EXPECT_EQ(s.count("dp_shard"), 0u);               // S = dp
  EXPECT_EQ(s.count("reshard_after_forward"), 0u);  // torchtitan's "default"
  s = Settings("llama3_8b.toml", 64);
  EXPECT_EQ(s.at("dp"), "64");
  EXPECT_EQ(s.at("zero"), "3");
  // deepseek_v3_671b.toml: fsdp_reshard_after_forward = "default" read; with ep 1 and tp 1 its
  // experts shard as dense parameters (models/transformer.cc ExpertsShardAsDense).
  s = Settings("deepseek_v3_671b.toml", 8);
  EXPECT_EQ(s.at("zero"), "3");
  EXPECT_EQ(s.count("reshard_after_forward"), 0u);
}

// HSDP: replicate R x shard S -> dp R x S, dp_shard S; the reshard policy and the reduce dtype.
TEST(TorchtitanToml, HsdpAndPolicies) {
  const std::string base =
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[activation_checkpoint]\nmode = "
      "\"full\"\n[parallelism]\ndata_parallel_replicate_degree = 2\n"
      "data_parallel_shard_degree = 4\n";
  TorchtitanJob job;
  ASSERT_TRUE(
      ReadTorchtitanToml(base + "fsdp_reshard_after_forward = \"never\"\n", "job.toml", 8, "", &job)
          .ok());
  std::map<std::string, std::string> s;
  for (const TorchtitanSetting& t : job.settings) s[t.field] = t.value;
  EXPECT_EQ(s.at("dp"), "8");
  EXPECT_EQ(s.at("dp_shard"), "4");
  EXPECT_EQ(s.at("zero"), "3");
  EXPECT_EQ(s.at("reshard_after_forward"), "off");
  job = TorchtitanJob();
  ASSERT_TRUE(ReadTorchtitanToml(base + "fsdp_reshard_after_forward = \"always\"\n", "job.toml", 8,
                                 "", &job)
                  .ok());
  s.clear();
  for (const TorchtitanSetting& t : job.settings) s[t.field] = t.value;
  EXPECT_EQ(s.at("reshard_after_forward"), "on");
  EXPECT_EQ(TextError(base + "[training]\nmixed_precision_reduce = \"bfloat16\"\n"),
            "job.toml:10:26: training.mixed_precision_reduce: 'bfloat16': FSDP's gradient "
            "reduction in another dtype than the fp32 gradients is not modelled; valid: float32 "
            "(the default)");
  EXPECT_EQ(TextError(base + "fsdp_reshard_after_forward = \"sometimes\"\n"),
            "job.toml:9:30: parallelism.fsdp_reshard_after_forward: unknown policy 'sometimes'; "
            "valid: default, always, never");
}

// llama3_8b.toml with replicate 8, shard 1 (edited): DDP over 8 GPUs, no pipeline, the local
// batch of 1 sequence of 8192 tokens as one microbatch; selective_ac_option "op".
TEST(TorchtitanToml, Llama8bDdp) {
  TorchtitanJob job;
  const auto s = Settings("llama3_8b_ddp.toml", 8, &job);
  EXPECT_EQ(s.at("model"), "llama3-8b");
  EXPECT_EQ(s.at("dp"), "8");
  EXPECT_EQ(s.at("tp"), "1");
  EXPECT_EQ(s.at("pp"), "1");
  EXPECT_EQ(s.at("schedule"), "1F1B");
  EXPECT_EQ(s.at("microbatch_size"), "1");
  EXPECT_EQ(s.at("microbatches"), "1");
  EXPECT_EQ(s.at("seq_len"), "8192");
  EXPECT_EQ(s.at("recompute"), "selective");
  EXPECT_EQ(s.at("dtype"), "bf16");
  EXPECT_EQ(s.at("bytes_per_param"), "8,8");  // fp32 params + grads, fp32 Adam m and v
  EXPECT_EQ(s.count("sequence_parallel"), 0u);
  // Every key of the file is applied or in a note: e.g. the checkpoint section and the float8
  // settings without a float8 converter.
  std::string notes;
  for (const std::string& n : job.notes) notes += n + "\n";
  EXPECT_NE(notes.find("checkpoint.enable"), std::string::npos) << notes;
  EXPECT_NE(notes.find("quantize.linear.float8.filter_fqns"), std::string::npos) << notes;
  EXPECT_NE(notes.find("training.dataset"), std::string::npos) << notes;
}

// llama3_70b.toml with shard 1 and pp 4 Interleaved1F1B (edited) on 32 GPUs: tp 8 x pp 4.
// Microbatches: local_batch_size 8 / pipeline_parallel_microbatch_size 1 = 8. Stages: 2 per rank
// (a multi-stage schedule without layers_per_stage) = 8. Split (generate_llm_fqn_per_model_part,
// first/last_stage_less_layers 1 each): 80 + 1 + 1 = 82 effective layers over 8 stages = 10 each,
// 2 left over to stages 0 and 1 -> 11, 11, 10, ..., 10; minus the embedding on stage 0 and the
// output on stage 7: 10, 11, 10, 10, 10, 10, 10, 9 (sum 80).
TEST(TorchtitanToml, Llama70bPipeline) {
  const auto s = Settings("llama3_70b_pp.toml", 32);
  EXPECT_EQ(s.at("model"), "llama3-70b");
  EXPECT_EQ(s.at("dp"), "1");
  EXPECT_EQ(s.at("tp"), "8");
  EXPECT_EQ(s.at("pp"), "4");
  EXPECT_EQ(s.at("schedule"), "Interleaved1F1B");
  EXPECT_EQ(s.at("stages_per_rank"), "2");
  EXPECT_EQ(s.at("microbatch_size"), "1");
  EXPECT_EQ(s.at("microbatches"), "8");
  EXPECT_EQ(s.at("layers_per_stage"), "10,11,10,10,10,10,10,9");
  EXPECT_EQ(s.at("recompute"), "full");
  EXPECT_EQ(s.at("sequence_parallel"), "true");
  EXPECT_EQ(s.count("tp_comm_overlap"), 0u);  // async TP not enabled in the 70B file
  // The same degrees on 64 GPUs do not fill the world (torchtitan's assert).
  EXPECT_NE(FileError("llama3_70b_pp.toml", 64)
                .find("= 32 GPUs, but the platform has 64 (torchtitan requires"),
            std::string::npos);
}

// llama3_405b.toml with shard 1 (edited) on 8 GPUs: converters ["float8"] -> fp8; async TP with
// the compiled model -> TP communication overlap; local_batch_size 2 as one microbatch.
TEST(TorchtitanToml, Llama405bFloat8AsyncTp) {
  const auto s = Settings("llama3_405b_shard1.toml", 8);
  EXPECT_EQ(s.at("model"), "llama3-405b");
  EXPECT_EQ(s.at("tp"), "8");
  EXPECT_EQ(s.at("dtype"), "fp8");
  EXPECT_EQ(s.at("tp_comm_overlap"), "true");
  EXPECT_EQ(s.at("microbatch_size"), "2");
  EXPECT_EQ(s.at("seq_len"), "8192");
}

const std::string kBase =
    "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
    "data_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 8\n";

TEST(TorchtitanToml, MicrobatchesAndStages) {
  TorchtitanJob job;
  // pp 2 x replicate 4 on 8 GPUs; ZBVZeroBubble: 2 stages per rank; 8 / 2 = 4 microbatches of 2.
  const std::string text =
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 8\n"
      "[parallelism]\ndata_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 4\n"
      "pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"ZBVZeroBubble\"\n"
      "pipeline_parallel_microbatch_size = 2\n[activation_checkpoint]\nmode = \"none\"\n";
  ASSERT_TRUE(ReadTorchtitanToml(text, "job.toml", 8, "", &job).ok());
  std::map<std::string, std::string> s;
  for (const TorchtitanSetting& t : job.settings) s[t.field] = t.value;
  EXPECT_EQ(s.at("dp"), "4");
  EXPECT_EQ(s.at("microbatches"), "4");
  EXPECT_EQ(s.at("microbatch_size"), "2");
  EXPECT_EQ(s.at("stages_per_rank"), "2");
  // 32 + 2 = 34 over 4 stages: 9, 9, 8, 8 -> 8, 9, 8, 7.
  EXPECT_EQ(s.at("layers_per_stage"), "8,9,8,7");
  // pipeline_parallel_layers_per_stage 17 with 1F1B: ceil(34 / 17) = 2 stages = 1 per rank.
  const std::string lps =
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree "
      "= 1\npipeline_parallel_degree = 2\ndata_parallel_replicate_degree = 4\n"
      "pipeline_parallel_layers_per_stage = 8\n[activation_checkpoint]\nmode = \"full\"\n";
  EXPECT_NE(TextError(lps).find("pipeline_parallel_layers_per_stage: 8 makes 5 stages on 2 "
                                "ranks; 1F1B needs 1 stages per rank"),
            std::string::npos)
      << TextError(lps);
}

TEST(TorchtitanToml, BadInputIsLocatedAndNamed) {
  EXPECT_EQ(TextError("[model\n"),
            "job.toml:1:7: TOML syntax error: Error while parsing table header: expected ']', "
            "saw '\\n'");
  EXPECT_EQ(TextError(kBase + "tensor_parallel = 2\n").substr(0, 69),
            "job.toml:7:19: parallelism.tensor_parallel: unknown torchtitan key 'p");
  EXPECT_EQ(TextError(kBase + "tensor_parallel_degree = \"2\"\n"),
            "job.toml:7:26: parallelism.tensor_parallel_degree: a string; expected a whole "
            "number, e.g. 1");
  EXPECT_EQ(TextError(kBase + "[activation_checkpoint]\nmode = \"full\"\n", 16),
            "job.toml:5:30: parallelism.data_parallel_shard_degree: "
            "data_parallel_replicate_degree 8 x context_parallel_degree 1 x "
            "tensor_parallel_degree 1 x pipeline_parallel_degree 1 x data_parallel_shard_degree "
            "1 = 8 GPUs, but the platform has 16 (torchtitan requires the degrees to multiply to "
            "the world size; change --platform/--nodes or the degrees)");
  EXPECT_EQ(TextError("[model]\nname = \"llama3\"\nflavor = \"16B\"\n"),
            "job.toml:3:10: model.flavor: unknown model name and flavor 'llama3 16B'; valid: "
            "llama3 8B, llama3 70B, llama3 405B, deepseek_v3 671B (did you mean llama3 8B?)");
  // selective with the default selective_ac_option "2": every 2nd layer, not modelled.
  EXPECT_EQ(TextError(kBase),
            "job.toml: activation_checkpoint.selective_ac_option: '2' (the default) checkpoints "
            "every 2th layer: partial recomputation is not modelled; valid: \"op\", \"1\" "
            "(every layer), or mode \"full\" or \"none\"");
  EXPECT_NE(TextError(kBase + "context_parallel_degree = 2\n", 16)
                .find("context_parallel_degree: 2: torchtitan runs context parallelism under "
                      "FSDP"),
            std::string::npos);
}

}  // namespace
}  // namespace ppsim
