#!/usr/bin/env python3
"""The hostile-input corpus: malformed, extreme and oversized inputs for every reader and flag.

  hostile.py PPSIM WORKDIR [-k SUBSTRING]

Each case runs `ppsim` in WORKDIR/<case> with its files, under a 2 GiB address-space limit, and
must: exit 2 (1 for a deadlock); print nothing on stdout; print on stderr only lines that start
with the case's location (the flag, or the file) and are at most 2000 bytes with no control
characters; finish in under a second. Where a case states its message, the message must be that
one exactly. Exit 0 when every case holds, 1 listing the ones that do not.
"""
import gzip
import os
import resource
import shutil
import subprocess
import sys
import time

MEMORY_LIMIT = 2 << 30
TIME_LIMIT_S = 1.0
# Under AddressSanitizer (PPSIM_SANITIZED=1, set by CMake for -DPPSIM_SANITIZE=ON builds) the
# address-space limit cannot hold (ASan maps terabytes of shadow memory): ASan's own resident
# limit takes its place, and the time limit allows for ASan's slowdown.
SANITIZED = os.environ.get("PPSIM_SANITIZED") == "1"
if SANITIZED:
    TIME_LIMIT_S = 10.0
    os.environ["ASAN_OPTIONS"] = "hard_rss_limit_mb=%d:exitcode=86" % (MEMORY_LIMIT >> 20)
BIG = "7" * (1 << 20)  # a 1 MB token, in files
ARG = "7" * 100000     # the longest a command-line argument may be is 128 KiB

CASES = []


def case(name, args, where, files=None, code=2, message=None):
    CASES.append(dict(name=name, args=args, where=where, files=files or {}, code=code,
                      message=message))


RUN = ["run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--f", "1ms",
       "--b", "2ms", "--platform", "ideal"]


def run_with(flag, value, drop=(), **more):
    """`ppsim run` with `flag value` (and `more`, as --flag_name=value pairs), replacing the
    base's value of each flag given, and dropping the flags in `drop`."""
    pairs = [(flag, value)] + [("--" + k.replace("_", "-"), v) for k, v in more.items()]
    args = list(RUN)
    for name in [f for f, _ in pairs] + list(drop):
        if name in args:
            i = args.index(name)
            del args[i:i + 2]
    for f, v in pairs:
        args += [f, v]
    return args


# --- Flags: whole numbers.
COUNT_VALUES = ["-1", "2147483648", "99999999999999999999", "1e400", "nan", "", "1.5", "0x10",
                "\u2163", ARG, "4\n5"]
for flag in ["--pp", "--microbatches", "--stages-per-rank", "--nodes", "--tp", "--dp",
             "--max-tasks"]:
    for i, value in enumerate(COUNT_VALUES):
        if flag == "--max-tasks" and value == "2147483648":
            continue  # a valid limit (64-bit)
        case(f"count{flag}-{i}", run_with(flag, value), flag)
for flag in ["--seq-len", "--microbatch-size", "--zero", "--ep", "--comm-sms", "--moe-node-limit",
             "--dp-shard"]:
    for i, value in enumerate(["-1", "2147483648", "abc", ARG]):
        case(f"model-count{flag}-{i}", run_with("--model", "llama3-8b", ("--f", "--b")) + [flag, value], flag)
case("issue-dp-huge", run_with("--dp", "2147483647") + ["--grad-bytes", "1"], "--dp",
     message="--dp: 2147483647 replicas; at most 65535")
case("issue-pp-m-huge", run_with("--pp", "100000", microbatches="100000"), "--pp",
     message="--pp 100000, --microbatches 100000: 4.0e+10 tasks (about 5.384 TiB); the limit is "
             "5.0e+07 tasks (--max-tasks)")
case("issue-nodes-wrap", run_with("--nodes", "536870913", platform="h100-node"), "--nodes")
case("issue-seq-mbs", run_with("--model", "llama3-8b", ("--f", "--b")) +
     ["--seq-len", "2147483647", "--microbatch-size", "2147483647"], "--seq-len")
# Sharded data parallelism: a stage past 3, a shard group not dividing dp, an unknown policy.
case("zero-stage-4", run_with("--model", "llama3-8b", ("--f", "--b")) + ["--zero", "4"], "--zero")
case("dp-shard-not-divisor", run_with("--model", "llama3-8b", ("--f", "--b")) +
     ["--dp", "4", "--zero", "3", "--dp-shard", "3"], "--dp-shard")
case("reshard-unknown", run_with("--model", "llama3-8b", ("--f", "--b")) +
     ["--dp", "2", "--zero", "3", "--reshard-after-forward", "sometimes"], "--reshard-after-forward")
case("zero-max-tasks", run_with("--max-tasks", "0"), "--max-tasks",
     message="--max-tasks: must be at least 1; got 0")

# --- Flags: durations, sizes, bandwidths, rates.
for flag in ["--f", "--b", "--overlap", "--p2p-latency"]:
    for i, value in enumerate(["-1ms", "1e308s", "1e-320", "nan", "inf", "1ms,,2ms", "1 ms",
                               "1xs", ARG, "\x01"]):
        case(f"duration{flag}-{i}", run_with(flag, value), flag)
for flag in ["--activation", "--message-bytes", "--grad-bytes", "--memory-limit"]:
    for i, value in enumerate(["-1", "1.5B", "9e99GB", "2PiB", "1e-3KiB", "abc", ARG]):
        case(f"size{flag}-{i}", run_with(flag, value), flag)
# ZB-auto's limit as a multiple of p x M_B, and what the schedules found from costs need.
ZB_AUTO = ["run", "--schedule", "ZB-auto", "--pp", "4", "--microbatches", "8", "--f", "1ms",
           "--i", "1ms", "--w", "1ms", "--activation", "1GB", "--platform", "ideal"]
for i, value in enumerate(["0p", "-1p", "p", "1.5p", "1025p", "9e99p", "1Mip", "1pp", ARG + "p"]):
    case(f"memory-limit-p-{i}", ZB_AUTO + ["--memory-limit", value], "--memory-limit")
case("memory-limit-p-1f1b", run_with("--memory-limit", "2p"), "--memory-limit")
case("zb-auto-no-room", ZB_AUTO + ["--memory-limit", "1B"], "--memory-limit")
case("zb-1p-no-activation", ["run", "--schedule", "ZB-1p", "--pp", "4", "--microbatches", "8",
                             "--f", "1ms", "--i", "1ms", "--w", "1ms", "--platform", "ideal"],
     "--activation")
case("zb-2p-schedule-only", ["schedule", "--schedule", "ZB-2p", "--pp", "4", "--microbatches",
                             "8"], "--schedule")
for i, value in enumerate(["0", "-1GB/s", "1e-300B/s", "1e30GB/s", "fast", ARG, "nan"]):
    case(f"bandwidth-{i}", run_with("--p2p-bandwidth", value), "--p2p-bandwidth")
for i, value in enumerate(["0", "1e-320", "-0.5", "1.5", "nan", "inf", "x"]):
    case(f"efficiency-{i}", run_with("--model", "llama3-8b", ("--f", "--b")) + ["--efficiency", value],
         "--efficiency")

for i, value in enumerate(["0", "-1", "1.5B", "9e99GB", "abc", ARG]):
    case(f"grad-bucket-{i}", run_with("--dp", "2") + ["--grad-bytes", "1GB", "--grad-bucket", value],
         "--grad-bucket")
case("grad-bucket-tiny", run_with("--dp", "4") + ["--grad-bytes", "1GB", "--grad-bucket", "1B"],
     "--grad-bucket")
case("grad-bucket-no-dp", run_with("--grad-bytes", "1GB") + ["--grad-bucket", "1MB"], "--grad-bucket")
for i, value in enumerate(["0", "-1", "3", "x"]):
    case(f"cp-{i}", run_with("--model", "llama3-8b", ("--f", "--b")) + ["--cp", value], "--cp")
case("cp-huge", run_with("--model", "llama3-8b", ("--f", "--b")) + ["--cp", "2147483647"], "--cp",
     message="--cp: 2147483647 x --tp 1 = 2147483647 GPUs per rank; at most 65535")
case("cp-tasks", run_with("--model", "llama3-8b", ("--f", "--b")) +
     ["--cp", "4096", "--seq-len", "8192", "--dp", "4096"], "--pp",
     message="--pp 4, --microbatches 8, --dp 4096, --cp 4096: 1.6e+12 tasks (about 222 TiB); "
             "the limit is 5.0e+07 tasks (--max-tasks)")
# Every replica simulated: 4 stages x (6n + 66) x n collective tasks over n = 4096 x 4096 members.
case("cp-tasks-all-replicas", run_with("--model", "llama3-8b", ("--f", "--b")) +
     ["--cp", "4096", "--seq-len", "8192", "--dp", "4096", "--replicas", "all"], "--pp",
     message="--pp 4, --microbatches 8, --dp 4096, --cp 4096: 6.8e+15 tasks (about 9.093e+05 TiB); "
             "the limit is 5.0e+07 tasks (--max-tasks)")
DP_RUN = ["run", "--schedule", "1F1B", "--pp", "2", "--microbatches", "4", "--f", "1ms", "--b", "2ms",
          "--grad-bytes", "400MB", "--platform", "dgx-h100"]
case("collective-name", DP_RUN + ["--dp", "4", "--collective-algorithm", "trees"],
     "--collective-algorithm",
     message="--collective-algorithm: unknown collective algorithm 'trees'; valid: auto, ring, tree, "
             "nvls, nvls-tree, hierarchical (did you mean tree?)")
case("collective-uneven", DP_RUN + ["--dp", "3", "--nodes", "2", "--tp", "2",
                                     "--collective-algorithm", "tree"], "--collective-algorithm",
     message="--collective-algorithm: stage 1's all-reduce: its 3 GPUs are not the same number on "
             "every node in runs of consecutive replicas; use ring (or a placement that groups them)")
case("collective-nvls-nodes", DP_RUN + ["--dp", "4", "--nodes", "4", "--tp", "4",
                                         "--collective-algorithm", "nvls"], "--collective-algorithm",
     message="--collective-algorithm: stage 0's all-reduce: nvls for all-reduce: without CollNet NCCL "
             "runs NVLS on one node only, and the communicator spans 2 nodes; valid here: tree, ring")
case("collective-nvls-tree-node", DP_RUN + ["--dp", "2", "--tp", "2",
                                             "--collective-algorithm", "nvls-tree"],
     "--collective-algorithm",
     message="--collective-algorithm: stage 0's all-reduce: nvls-tree for all-reduce: NCCL runs "
             "NVLS_TREE on more than one node only; valid here: tree, ring")
case("replicas-name", run_with("--dp", "2") + ["--replicas", "some"], "--replicas",
     message="--replicas: unknown replicas choice 'some'; valid: one, all")
case("tp-huge", run_with("--tp", "70000"), "--tp",
     message="--tp: 70000 GPUs per rank; at most 65535")
# --- The workload: global batch, training tokens, price, how costs are read.
RUN_M = [a for a in RUN if a not in ("--microbatches", "8")]
for i, value in enumerate(["0", "-1", "1.5", "1e400", "abc", "2Xtok", ARG, "99999999999999999999tok",
                           "2147483648000", "1Etok", "4\n5"]):
    case(f"global-batch-{i}", RUN_M + ["--global-batch", value, "--seq-len", "4096"],
         "--global-batch")
case("global-batch-mismatch", RUN + ["--global-batch", "64"], "--global-batch",
     message="--global-batch: 64 sequences over --dp 1 x --microbatch-size 1 make 64 microbatches, "
             "but --microbatches says 8")
case("global-batch-tokens-no-seq", RUN_M + ["--global-batch", "1Mitok"], "--global-batch")
case("workload-tokens-overflow", RUN + ["--seq-len", "2147483647", "--microbatch-size",
                                        "2147483647"], "--microbatch-size")
for i, value in enumerate(["0", "-1", "1e30", "abc", ARG, "1.5tok", "15Q"]):
    case(f"train-tokens-{i}", RUN + ["--seq-len", "4096", "--train-tokens", value],
         "--train-tokens")
case("train-tokens-no-seq", RUN + ["--train-tokens", "1T"], "--train-tokens")
for i, value in enumerate(["-1", "nan", "inf", "1e300", "x"]):
    case(f"gpu-hour-cost-{i}", RUN + ["--seq-len", "4096", "--train-tokens", "1T",
                                      "--gpu-hour-cost", value], "--gpu-hour-cost")
case("gpu-hour-cost-alone", RUN + ["--gpu-hour-cost", "2"], "--gpu-hour-cost")
for i, value in enumerate(["rack", "", ARG, "RANK"]):
    case(f"costs-per-{i}", RUN + ["--costs-per", value], "--costs-per")
case("costs-per-rank-list", run_with("--f", "1ms,2ms,3ms,4ms,5ms,6ms,7ms,8ms", stages_per_rank="2",
                                     schedule="Interleaved1F1B"), "--f")
POINTS = {"e.yaml": "base: {schedule: 1F1B, pp: 2, f: 1ms, b: 2ms, platform: ideal}\n"
                    "axes: [{field: microbatches, values: ['2', '4']}]\n"}
for i, value in enumerate(["-1", "2", "abc", "99999999999999999999", ARG, ""]):
    case(f"point-{i}", ["run", "e.yaml", "--point", value], "--point", files=POINTS)
case("point-no-file", RUN + ["--point", "1"], "--point")
case("point-override-bad", ["run", "e.yaml", "--point", "1", "--pp", "0"], "--pp", files=POINTS,
     message="--pp: must be at least 1; got 0")
MOE = run_with("--model", "mixtral-8x7b", ("--f", "--b"), platform="dgx-h100", nodes="4")
case("ep-no-model", run_with("--ep", "2"), "--ep",
     message="--ep: shards a model's experts; give --model")
case("ep-dense-model", run_with("--model", "llama3-8b", ("--f", "--b")) + ["--ep", "2", "--dp", "2"],
     "--ep", message="--ep: 2 shards routed experts; llama3-8b has none (valid: 1)")
case("ep-experts", MOE + ["--ep", "3", "--dp", "8"], "--ep",
     message="--ep: 3 does not divide the 8 experts of mixtral-8x7b; valid with these GPUs: 1, 2, 4, 8")
case("ep-gpus", MOE + ["--ep", "8", "--dp", "2"], "--ep",
     message="--ep: 8 does not divide the dp x tp x cp = 2 GPUs that hold a stage (expert-parallel "
             "groups are taken from them); valid: 1, 2")
case("ep-huge", MOE + ["--ep", "2147483647"], "--ep")
case("ep-tp-no-sp", MOE + ["--ep", "8", "--dp", "4", "--tp", "2"], "--tp")
case("comm-sms-no-ep", MOE + ["--comm-sms", "20"], "--comm-sms",
     message="--comm-sms: slows computation beside the expert-parallel all-to-alls; give --ep 2 or more")
case("comm-sms-all", MOE + ["--ep", "8", "--dp", "8", "--comm-sms", "132"], "--comm-sms",
     message="--comm-sms: 132 SMs of the H100 SXM's 132; valid: 0 to 131")
case("node-limit-no-ep", MOE + ["--moe-node-limit", "4"], "--moe-node-limit",
     message="--moe-node-limit: limits where the expert-parallel all-to-alls send tokens; give --ep 2 or more")
case("node-limit-zero", MOE + ["--ep", "8", "--dp", "8", "--moe-node-limit", "0"], "--moe-node-limit")
DEEPSEEK = run_with("--model", "deepseek-v3", ("--f", "--b"), platform="dgx-h100", nodes="16",
                    pp="2", microbatches="2")
case("node-limit-partial-nodes", DEEPSEEK + ["--dp", "64", "--ep", "4", "--placement", "round-robin",
                                              "--moe-node-limit", "2"], "--moe-node-limit")
case("moe-overlap-no-ep", MOE + ["--overlap-moe-expert-parallel-comm"],
     "--overlap-moe-expert-parallel-comm",
     message="--overlap-moe-expert-parallel-comm: overlaps the expert-parallel all-to-alls; give "
             "--ep 2 or more with a MoE --model")
case("delay-wgrad-alone", MOE + ["--ep", "8", "--dp", "8", "--delay-wgrad-compute"],
     "--delay-wgrad-compute",
     message="--delay-wgrad-compute: splits the weight gradients for the expert-parallel overlap; "
             "give --overlap-moe-expert-parallel-comm")
case("moe-overlap-gpipe", run_with("--model", "mixtral-8x7b", ("--f", "--b"), platform="dgx-h100",
                                   nodes="4", schedule="GPipe")
     + ["--ep", "8", "--dp", "8", "--overlap-moe-expert-parallel-comm"],
     "--overlap-moe-expert-parallel-comm",
     message="--overlap-moe-expert-parallel-comm: Megatron-LM's combined 1F1B runs with its "
             "interleaved schedule (or without pipelining); got GPipe; valid: "
             "Megatron-Interleaved, or 1F1B with pp 1")
case("moe-overlap-megatron-p2p", MOE + ["--ep", "8", "--dp", "8", "--p2p-mode", "megatron",
                                       "--overlap-moe-expert-parallel-comm"], "--p2p-mode",
     message="--p2p-mode: Megatron-LM's p2p calls around the combined steps of "
             "--overlap-moe-expert-parallel-comm are not modelled; valid: eager, torch")
case("moe-overlap-full-recompute", MOE + ["--ep", "8", "--dp", "8", "--recompute", "full",
                                          "--overlap-moe-expert-parallel-comm"],
     "--overlap-moe-expert-parallel-comm")
case("ep-with-f", MOE + ["--ep", "8", "--dp", "8", "--f", "1ms"], "--f",
     message="--f: replaces the model's durations, whose MoE parts and all-to-alls --ep 8 "
             "simulates; give them with --ep 1, or leave them to the model")
case("ep-misaligned-folded", MOE + ["--seq-len", "6144", "--set", "gpus_per_node=12", "--dp", "2",
                                    "--tp", "2", "--cp", "3", "--sequence-parallel", "--ep", "4"],
     "--ep", message="--ep: 4 with 6 GPUs per rank (tp x cp): with replicas folded the "
                     "expert-parallel groups must divide or be a multiple of them; use --replicas all")
case("cp-no-model", run_with("--cp", "2"), "--cp")
case("cp-no-flash", run_with("--model", "llama3-8b", ("--f", "--b")) +
     ["--cp", "2", "--flash-attention", "off"], "--cp")
for i, value in enumerate(["ring", "", "a2a+p2p+", "P2P", "p2p,a2a"]):
    case(f"cp-comm-type-{i}", run_with("--model", "llama3-8b", ("--f", "--b")) +
         ["--cp", "2", "--cp-comm-type", value], "--cp-comm-type")
case("cp-comm-type-no-model", run_with("--cp", "2") + ["--cp-comm-type", "a2a"], "--cp-comm-type")
for i, extra in enumerate([[], ["--cp-a2a-size", "3"], ["--cp-a2a-size", "0"],
                           ["--cp-a2a-size", "-2"], ["--cp-a2a-size", "x"]]):
    case(f"cp-a2a-size-{i}", run_with("--model", "llama3-8b", ("--f", "--b")) +
         ["--cp", "2", "--cp-comm-type", "a2a+p2p"] + extra, "--cp-a2a-size")
case("cp-a2a-size-without-a2a-p2p", run_with("--model", "llama3-8b", ("--f", "--b")) +
     ["--cp", "2", "--cp-a2a-size", "2"], "--cp-a2a-size")
case("cp-a2a-size-no-model", run_with("--cp", "2") + ["--cp-a2a-size", "2"], "--cp-a2a-size")
case("cp-a2a-heads", run_with("--model", "llama3-8b", ("--f", "--b"), platform="dgx-h100") +
     ["--tp", "8", "--cp", "2", "--nodes", "8", "--cp-comm-type", "a2a"], "--cp-comm-type")
case("cp-group-straddles", run_with("--model", "llama3-8b", ("--f", "--b"), platform="dgx-h100") +
     ["--tp", "4", "--cp", "3", "--seq-len", "6144", "--nodes", "6"], "--cp")
case("tp-comm-overlap-no-tp", run_with("--model", "llama3-8b", ("--f", "--b")) +
     ["--tp-comm-overlap"], "--tp-comm-overlap")
for i, value in enumerate(["gpu.sms=-5", "gpu.sms=x", "gpu.matmul_efficiency=0",
                           "gpu.memory_efficiency=2", "gpu.attention_efficiency=nan"]):
    case(f"gpu-model-{i}", run_with("--set", value, platform="h100-node"), "--set")

# --- Flags: names.
for flag, values in [("--schedule", ["ZBV", "", ARG, "1F1B\nGPipe", "1F1B,,GPipe"]),
                     ("--platform", ["dgx-h1000", ARG]),
                     ("--engine", ["ns3", ARG]), ("--format", ["xml", "\x1b[31m"]),
                     ("--placement", ["0,x", "-1", ARG]), ("--trace-microbatches", ["4:2", "x", ARG]),
                     ("--set", ["nic.speed=1Gbps", "nic", "gpu.memory=-1GiB", ARG])]:
    for i, value in enumerate(values):
        args = run_with(flag, value)
        if flag == "--trace-microbatches":
            args += ["--trace", "t.pftrace"]
        if flag == "--set":
            args = run_with("--platform", "dgx-h100") + [flag, value]
        case(f"name{flag}-{i}", args, flag)
for flag, value in [("--model", "llama3-9b"), ("--model", ARG), ("--dtype", "fp4"),
                    ("--recompute", "some"), ("--flash-attention", "maybe"),
                    ("--layers-per-stage", "8,8,x"), ("--layers-per-stage", "-1,33,0,0")]:
    args = run_with("--model", "llama3-8b", ("--f", "--b"))
    if flag != "--model":
        args += [flag, value]
    else:
        args = run_with("--model", value, ("--f", "--b"))
    case(f"model{flag}-{value[:8]}", args, flag)
# Activation offload: unknown and twice-listed modules, a cluster without a host link, a module
# Megatron refuses alone, an expert module on a dense model.
NO_HOST = {"nohost.yaml": "gpu: {dense_bf16: 1PFLOP/s, memory: 80GiB}\ngpus_per_node: 4\n"
                          "intra_node: {kind: NVSWITCH, bandwidth: 450GB/s}\n"}
for i, (value, platform) in enumerate([("attn", "dgx-h100"), ("core_attn,core_attn", "dgx-h100"),
                                       ("core_attn", "nohost.yaml"), ("attn_proj", "dgx-h100"),
                                       ("moe_act", "dgx-h100"), (ARG, "dgx-h100")]):
    args = run_with("--model", "llama3-8b", ("--f", "--b"), platform=platform)
    case(f"offload-modules-{i}", args + ["--offload-modules", value], "--offload-modules",
         files=NO_HOST if platform == "nohost.yaml" else None)
case("unknown-flag", RUN + ["--microbatch", "3"], "--microbatch",
     message="--microbatch: unknown option; did you mean --microbatches? see 'ppsim run --help' for "
             "the valid options")
case("stray", RUN + ["stray"], "ppsim run")
case("repeated", RUN + ["--pp", "5"], "--pp")
case("missing-value", RUN + ["--f"], "--f")
case("xml-engine", ["run", "--schedule", "GPipe", "--pp", "2", "--microbatches", "1", "--f", "1",
                    "--b", "2", "--platform", "lab.xml", "--hosts", "a,b", "--engine",
                    "critical-path"], "--engine",
     files={"lab.xml": "<?xml version='1.0'?><platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
            "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/></zone></platform>"})
case("xml-replicas-one", ["run", "--schedule", "GPipe", "--pp", "1", "--microbatches", "1", "--f", "1",
                          "--b", "2", "--dp", "2", "--platform", "lab.xml", "--hosts", "a,b",
                          "--replicas", "one"], "--replicas",
     message="--replicas: one needs a cluster (a preset or a cluster file): the routes of the XML "
             "platform lab.xml are known to SimGrid only; use --replicas all",
     files={"lab.xml": "<?xml version='1.0'?><platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">"
            "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/></zone></platform>"})

# --- Schedule files.
SCHEDULES = {
    "index-microbatch": "rank 0: 0F2147483647\n",
    "index-stage": "rank 0: 2147483647F0\n",
    "index-overflow": "rank 0: 0F99999999999999999999\n",
    "malformed": "rank 0: 0F0 0X0\n",
    "rank-order": "rank 1: 0F0\n",
    "empty": "",
    "binary": "\x00\x01\x02\xff\xfe",
    "big-token": "rank 0: " + BIG + "\n",
    "missing-backward": "rank 0: 0F0\n",
    "stage-two-ranks": "rank 0: 0F0 0B0\nrank 1: 0F1 0B1\n",
    "overlap-bad": "rank 0: (0F0;)OVERLAP_F_B\n",
    "csv-bad": None,
}
for name, text in SCHEDULES.items():
    if text is None:
        case("schedule-csv-bad", ["run", "--schedule-file", "s.csv", "--f", "1", "--b", "2"],
             "s.csv", files={"s.csv": "0F0,0B0\n1F0,1B0,(1F1;)OVERLAP_F_B\n"})
        continue
    case(f"schedule-{name}", ["run", "--schedule-file", "s.txt", "--f", "1", "--b", "2"], "s.txt",
         files={"s.txt": text})
case("deadlock", ["run", "--schedule-file", "s.txt", "--f", "1", "--b", "2"], "deadlock", code=1,
     files={"s.txt": "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1B1 1F0 1B0\n"})
case("schedule-missing-file", ["run", "--schedule-file", "none.txt", "--f", "1", "--b", "2"],
     "--schedule-file")

# --- Experiment files (run FILE and sweep FILE).
EXPERIMENTS = {
    "deep.textproto": "base " * 50000 + "{" * 0 + "",
    "deep2.textproto": "base { " + "set: " * 0 + "}" ,
    "nest.textproto": "axes { with " * 50000 + "}" * 50000,
    "deep.yaml": "- " * 50000 + "1\n",
    "deepflow.yaml": "[" * 50000,
    "deep.json": "[" * 50000,
    "deepobj.json": "{\"a\":" * 50000,
    "bigtoken.yaml": "name: " + BIG + "\nbase: {pp: " + BIG + "}\n",
    "control.yaml": "name: \"a\\x01b\"\nbase: {schedule: \"1F1B\\n\\x1b[2J\"}\n",
    "unknown.yaml": "base: {microbatch: 8}\n",
    "binary.json": "\x00\xff{",
    "utf8.yaml": "base: {schedule: \"\xe2\x82\"}\n",
    "dup.yaml": "base: {pp: 2}\nbase: {pp: 3}\n",
    "alias-bomb.yaml": "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi")) + "base: *i\n",
    "multi.yaml": "name: a\n---\nname: b\n",
    "types.yaml": "base: {pp: [1]}\n",
    "axes-1e12.yaml": "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: 1, b: 2}\naxes:\n" + "".join(
        "  - {field: %s, values: [%s]}\n" % (f, ", ".join(str(i + 1) for i in range(1000)))
        for f in ["microbatches", "pp", "nodes", "dp"]),
    "axes-2e64.yaml": "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: 1, b: 2}\naxes:\n" + "".join(
        "  - {field: %s, values: [%s]}\n" % (f, ", ".join(str(i + 1) for i in range(65536)))
        for f in ["microbatches", "pp", "nodes", "dp"]),
    "huge.yaml": "name: x\ndescription: " + "y" * (2 << 20) + "\n",
    "bad-value.yaml": "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: -1ms, b: 2}\n",
    "bad-axis.yaml": "base: {schedule: 1F1B, pp: 4, f: 1, b: 2}\naxes: [{field: microbatches, values: ['0']}]\n",
    "empty-axis.yaml": "base: {schedule: 1F1B, pp: 4, f: 1, b: 2}\naxes: [{field: microbatches}]\n",
    "with-mismatch.json": '{"axes": [{"field": "pp", "values": ["1"], "with": [{"field": "f", "values": []}]}]}',
    "tags.yaml": "base: !!binary aGVsbG8=\n",
    "key-map.yaml": "{a: 1}: 2\n",
}
for name, text in EXPERIMENTS.items():
    for command in (["run", name], ["sweep", name, "-o", "r.csv"]):
        # `ppsim run FILE` runs the base run: it does not make a sweep's points at all.
        code = 0 if command[0] == "run" and name == "axes-1e12.yaml" else 2
        case(f"experiment-{command[0]}-{name}", command, name, files={name: text}, code=code)
# Text in other encodings than UTF-8: UTF-16 and UTF-8 with a byte-order mark are read (tests/cli),
# these are refused with the file named.
BASE_TEXT = "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: 1ms, b: 2ms, platform: ideal}\n"
for name, data, what in [
        ("utf16-no-bom.yaml", BASE_TEXT.encode("utf-16-le"),
         "the file has NUL bytes where text starts; it looks like UTF-16 without a byte-order mark"),
        ("utf32.yaml", BASE_TEXT.encode("utf-32"), "the file is UTF-32"),
        ("utf16-broken.textproto", b"\xff\xfe" + "base {}".encode("utf-16-le") + b"\x00\xd8",
         "the file is UTF-16 that does not decode")]:
    case(f"encoding-{name}", ["run", name], name, files={name: data},
         message=f"{name}: {what}; save it as UTF-8")
case("platform-missing-file", run_with("--platform", "no/such/file.yaml"), "no/such/file.yaml")
case("issue-sweep-overwrites-input", ["sweep", "e.yaml", "-o", "e.yaml"], "-o",
     files={"e.yaml": "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: 1, b: 2, platform: ideal}\n"},
     message="-o: 'e.yaml' is also an input of this command (e.yaml); choose another file")
case("sweep-jobs", ["sweep", "e.yaml", "-o", "r.csv", "-j", "0"], "-j",
     files={"e.yaml": "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: 1, b: 2}\n"})
case("sweep-shard", ["sweep", "e.yaml", "-o", "r.csv", "--shard", "3/2"], "--shard",
     files={"e.yaml": "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: 1, b: 2}\n"})
case("sweep-timeout", ["sweep", "e.yaml", "-o", "r.csv", "--point-timeout", "-1s"], "--point-timeout",
     files={"e.yaml": "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: 1, b: 2}\n"})
case("sweep-max-points", ["sweep", "e.yaml", "-o", "r.csv", "--max-points", ARG], "--max-points",
     files={"e.yaml": "base: {schedule: 1F1B, pp: 4, microbatches: 8, f: 1, b: 2}\n"})

# --- Profiles, models, clusters.
for name, text in {"p.csv": "stage,f_ms\n0,-1\n", "p2.csv": "stage,f_lightyears\n0,1\n",
                   "p3.csv": "f_ms,f_us\n1,2\n", "p4.csv": "", "p5.csv": "f_ms\n" + BIG + "\n",
                   "p.yaml": "stages: [{f_s: 1e999}]\n", "p.json": "{\"stages\": " + "[" * 5000,
                   "p.textproto": "stages { f_ms: 2 }\n"}.items():
    case(f"profile-{name}", ["run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8",
                             "--profile", name, "--platform", "ideal"], name, files={name: text})
for name, text in {"m.yaml": "name: x\nlayers: 0\nhidden: 512\nheads: 8\nvocab: 1\n",
                   "m2.yaml": "name: x\nlayers: 4\nhidden: 512\nheads: 3\nvocab: 1\nseq_len: 4\n",
                   "m3.json": "{\"layers\": 99999999999999}", "m4.yaml": "mlp: SWIGLUE\n",
                   "m5.textproto": "layers: -3000000000\n",
                   "m6.yaml": "name: x\nlayers: 4\nhidden: 9223372036854775807\nheads: 1\nvocab: 1\nseq_len: 4\n"}.items():
    case(f"model-file-{name}", ["model", "--model", name], name, files={name: text})
# A model file without mlp, norm and tied_embeddings: each named, nothing assumed.
case("model-file-missing-fields", ["model", "--model", "m7.yaml"], "m7.yaml",
     files={"m7.yaml": "layers: 2\nhidden: 64\nheads: 4\nvocab: 10\nseq_len: 8\n"})
# torchtitan job files (interop/torchtitan_toml.h): located TOML errors, keys named.
TT = '[model]\nname = "llama3"\nflavor = "8B"\n[parallelism]\ndata_parallel_shard_degree = 1\n'
for name, text in [
        ("syntax", "[model\nname = 1\n"),
        ("unknown-key", TT + "tensor_parallel = 8\n"),
        ("unknown-section", TT + "[nonsense]\nx = 1\n"),
        ("wrong-type", TT + 'tensor_parallel_degree = "8"\n'),
        ("huge-degree", TT + "tensor_parallel_degree = 99999999999999999999\n"),
        ("zero-degree", TT + "pipeline_parallel_degree = 0\n"),
        ("unknown-flavor", TT.replace("8B", "9B")),
        ("fsdp", TT.replace("= 1", "= -1")),
        ("fsdp-policy", TT.replace("= 1", "= 2") + 'fsdp_reshard_after_forward = "sometimes"\n'),
        ("fsdp-reduce", TT.replace("= 1", "= 2") + '[training]\nmixed_precision_reduce = "x"\n'),
        ("deep", "a = " + "[" * 5000 + "]" * 5000 + "\n"),
        ("nul", "a = 1\n\0"),
        ("big", "a = \"" + BIG + "\"\n"),
        ("duplicate", TT + "data_parallel_shard_degree = 2\n")]:
    case(f"torchtitan-{name}", ["run", "--torchtitan", "job.toml"], "--torchtitan",
         files={"job.toml": text})
# Hugging Face config.json files (interop/hf_config.h), told by content.
HF = ('{"architectures": ["LlamaForCausalLM"], "intermediate_size": 128, "num_hidden_layers": 2, '
      '"num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 64, ')
for name, text, message in [
        ("unknown-arch", '{"architectures": ["GPT2LMHeadModel"], "hidden_size": 64}',
         "config.json: architectures: unknown architecture 'GPT2LMHeadModel'; valid: "
         "LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, "
         "Qwen3ForCausalLM, Qwen3MoeForCausalLM, DeepseekV3ForCausalLM"),
        ("string-number", HF + '"hidden_size": "64"}',
         'config.json: hidden_size: a string ("64"); give a whole number from 1 to 16777216'),
        ("truncated", HF + '"hidden_size": 6', None),
        ("huge-hidden", HF + '"hidden_size": 99999999999999999999}',
         "config.json: hidden_size: must be at most 16777216; got 1e+20"),
        ("huge-hidden-2", HF + '"hidden_size": 16777216, "num_hidden_layers": 100000}',
         "config.json: num_hidden_layers: the model's sizes allow up to 4.5e+20 parameters; "
         "counts are kept up to 2^60"),
        ("deep", '{"model_type": "llama", "x": ' + "[" * 5000 + "]" * 5000 + "}", None),
        ("not-object", '["architectures", "model_type"]', None)]:
    case(f"hf-config-{name}", ["model", "--model", "config.json"], "config.json",
         files={"config.json": text}, message=message)
for name, text in {"c.yaml": "nodes: -1\n", "c2.yaml": "gpus_per_node: 2147483647\nnodes: 2147483647\n",
                   "c3.json": "{\"gpu\": {\"dense_bf16\": \"1e-300FLOP/s\"}}",
                   "c4.textproto": "intra_node { kind: WARP }\n",
                   "c5.yaml": "network: {oversubscription: .nan}\n",
                   "c6.yaml": "host_link: {bandwidth: -1GB/s, latency: 1e400s}\n",
                   "c7.json": "{\"host_link\": {\"bandwidth\": 7}}"}.items():
    case(f"cluster-{name}", run_with("--platform", name), name, files={name: text})

# --- Megatron-LM arguments (interop/megatron_args.h): --megatron ARGS and --megatron @FILE.
MG = ("--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --vocab-size 100 "
      "--bf16 ")
for name, text, message in [
        ("unknown", MG + "--frobnicate 3",
         "--megatron: --frobnicate: unknown Megatron-LM argument; ppsim refuses what it does not "
         "know rather than drop it (README, --megatron, lists the arguments it reads)"),
        ("missing-value", MG + "--micro-batch-size",
         "--megatron: --micro-batch-size: missing value; --micro-batch-size takes one value"),
        ("not-whole", MG + "--micro-batch-size 1.5",
         "--megatron: --micro-batch-size: expected a whole number, got '1.5'"),
        ("huge-whole", MG + "--micro-batch-size 99999999999999999999",
         "--megatron: --micro-batch-size: expected a whole number, got '99999999999999999999'"),
        ("tp-heads", MG + "--tensor-model-parallel-size 3",
         "--megatron: --tensor-model-parallel-size: 3 does not divide the 4 attention heads "
         "(--num-attention-heads); Megatron asserts it does"),
        ("huge-layers", MG + "--num-layers 2147483647",
         "--megatron: --num-layers: must be at most 100000; got 2147483647"),
        ("huge-pp", MG + "--pipeline-model-parallel-size 2147483647",
         "--megatron: --pipeline-model-parallel-size: 2147483647 pipeline stages for 4 layers; "
         "each stage needs a layer"),
        ("huge-vocab", MG + "--vocab-size 2147483647 --make-vocab-size-divisible-by 2147483647",
         "--megatron: --vocab-size (model vocab): must be at most 16777216; got 2147483647"),
        ("deep-moe-freq", MG + "--num-experts 2 --moe-layer-freq '" + "(" * 100000 + "'", None),
        ("huge-moe-freq", MG + "--num-experts 2 --moe-layer-freq '[1]*999999999*999999999'", None),
        ("unterminated", MG + "--split '1,2", None),
        ("expansion", MG + "--save $HOME", None),
        ("fp32", MG.replace("--bf16 ", ""),
         "--megatron: --bf16: missing: without --bf16 or --fp16 Megatron trains in fp32, which "
         "ppsim does not model; give --bf16 or --fp16"),
        ("refused", MG + "--hybrid-context-parallel",
         "--megatron: --hybrid-context-parallel: changes performance and is not modelled: hybrid "
         "context parallelism is not modelled"),
        ("recompute-modules", MG + "--recompute-activations --recompute-modules core_attn mlp",
         None),
        ("bad-layout", MG + "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout "
                            "'Et|tt*99999999999|tL'", None),
        ("empty", "", None),
        ("big", ARG, None),
        ("no-dp", MG, None)]:
    case(f"megatron-{name}", ["run", "--megatron", text, "--platform", "ideal"], "--megatron",
         message=message)
for name, text in [("big", BIG), ("line3", "--num-layers 4\n--hidden-size 64\n--nope 1\n"),
                   ("utf16", "--num-layers 4 --nope".encode("utf-16"))]:
    case(f"megatron-file-{name}", ["run", "--megatron", "@a.args"], "a.args",
         files={"a.args": text})
case("megatron-file-missing", ["run", "--megatron", "@nope.args"], "nope.args")
case("megatron-as-ppsim-flag", ["run", "--tensor-model-parallel-size", "8"],
     "--tensor-model-parallel-size",
     message="--tensor-model-parallel-size: unknown option; --tensor-model-parallel-size is "
             "Megatron-LM's; ppsim's flag is --tp, or pass Megatron-LM arguments whole with "
             "--megatron '--tensor-model-parallel-size ...' (or --megatron @FILE)")

# --- XML platforms.
XML_HEAD = "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
XML_HOSTS = "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>\n"
XML_TAIL = "</zone>\n</platform>\n"
XMLS = {
    "empty": "",
    "truncated": XML_HEAD + XML_HOSTS,
    "duplicate-host": XML_HEAD + XML_HOSTS + "<host id=\"a\" speed=\"1Gf\"/>" + XML_TAIL,
    "unknown-link": XML_HEAD + XML_HOSTS + "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>" + XML_TAIL,
    "range": XML_HEAD + "<host id=\"a\" speed=\"1e999f\"/><host id=\"b\" speed=\"1Gf\"/>" + XML_TAIL,
    "zero-bandwidth": XML_HEAD + XML_HOSTS + "<link id=\"l\" bandwidth=\"0Bps\"/>" + XML_TAIL,
    "negative-bandwidth": XML_HEAD + XML_HOSTS + "<link id=\"l\" bandwidth=\"-1GBps\"/>" + XML_TAIL,
    "version": XML_HEAD.replace("4.1", "3") + XML_HOSTS + XML_TAIL,
    "routing": XML_HEAD.replace("Full", "Star") + XML_HOSTS + XML_TAIL,
    "entities": "<?xml version='1.0'?><!DOCTYPE p [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;&a;\">]>"
                "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=\"&b;\" speed=\"1Gf\"/>"
                "<host id=\"b\" speed=\"1Gf\"/></zone></platform>",
    "external": "<?xml version='1.0'?><!DOCTYPE p [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
                "<platform version=\"4.1\">&x;</platform>",
    "actor": XML_HEAD + XML_HOSTS + "<actor host=\"a\" function=\"f\"/>" + XML_TAIL,
    "deep": XML_HEAD + "<zone id=\"x\" routing=\"Full\">" * 5000 + XML_TAIL,
    "binary": "\x00\x01\x02",
}
for name, text in XMLS.items():
    case(f"xml-{name}", ["run", "--schedule", "GPipe", "--pp", "2", "--microbatches", "1", "--f", "1",
                         "--b", "2", "--platform", "p.xml", "--hosts", "a,b"], "p.xml",
         files={"p.xml": text})
case("xml-missing-host", ["run", "--schedule", "GPipe", "--pp", "2", "--microbatches", "1", "--f", "1",
                          "--b", "2", "--platform", "p.xml", "--hosts", "a,c"], "--hosts",
     files={"p.xml": XML_HEAD + XML_HOSTS + XML_TAIL})

# --- Results: report, merge.
HEADER = ("point,schedule,makespan_s,bubble_over_makespan,bubble_over_ideal,stage_bubble_rate,"
          "throughput_microbatches_per_s,samples_per_s,tokens_per_s,mfu,hfu,peak_memory_bytes,"
          "static_memory_bytes,memory_capacity_bytes,oom,time_to_train_s,gpu_hours,cost,status,"
          "error,wall_s\n")
ROW = "0,1F1B,1,0.1,0.1,0.1,8,8,,,,1,0,0,false,,,,ok,,0.1\n"
RESULTS = {
    "empty.csv": "", "header.csv": "x,y\n", "quote.csv": HEADER + "0,\"1F1B,1\n",
    "point.csv": HEADER + ROW.replace("0,1F1B", "1000000000000000000,1F1B"),
    "negative.csv": HEADER + ROW.replace("0,1F1B", "-1,1F1B"),
    "nan.csv": HEADER + ROW.replace(",1,0.1,", ",nan,0.1,"),
    "status.csv": HEADER + ROW.replace(",ok,", ",great,"),
    "fields.csv": HEADER + "0,1F1B\n", "binary.csv": "\x00\xff\n",
    "bigtoken.csv": HEADER + ROW.replace("1F1B", BIG),
}
RUN_HEADER = ("schedule,pp,stages,microbatches,platform,engine,makespan_s,bubble_over_makespan,"
              "bubble_over_ideal,stage_bubble_rate,peak_activation_bytes,compute_tasks,"
              "transfer_tasks,transfer_bytes,peak_memory_bytes,memory_capacity_bytes,oom_ranks,mfu,"
              "hfu,samples_per_s,tokens_per_s,time_to_train_s,gpu_hours,cost,dp,tp,"
              "allreduce_tail_s,intra_node_bytes,inter_node_bytes\n")
RUN_ROW = "1F1B,4,4,8,ideal,simgrid,0.5,0.1,0.1,0.1,0,1,1,0,1,0,0,,,16,,,,,1,1,0,0,0\n"
RESULTS.update({
    "run-columns.csv": "schedule,pp\n1F1B,4\n",
    "run-nan.csv": RUN_HEADER + RUN_ROW.replace(",0.5,", ",nan,"),
    "run-dp.csv": RUN_HEADER + RUN_ROW.replace(",1,1,0,0,0\n", ",-1,1,0,0,0\n"),
    "run-fields.csv": RUN_HEADER + "1F1B,4\n",
    "run-bigtoken.csv": RUN_HEADER + RUN_ROW.replace("1F1B", BIG),
})
for name, text in RESULTS.items():
    # A large point number or a long value is data a page can show: no error.
    code = 0 if name in ("point.csv", "bigtoken.csv", "run-bigtoken.csv") else 2
    case(f"report-{name}", ["report", name, "-o", "r.html"], name, files={name: text}, code=code)
case("issue-report-overwrites-input", ["report", "r.csv", "-o", "r.csv"], "-o",
     files={"r.csv": HEADER + ROW})
for name, text in {"gap.csv": HEADER + ROW.replace("0,1F1B", "1000000000000000000,1F1B"),
                   "bad.csv": HEADER + "x\n", "header.csv": "y\n" + ROW}.items():
    case(f"merge-{name}", ["merge", "a.csv", name, "-o", "m.csv"],
         "ppsim merge" if name == "gap.csv" else name, files={"a.csv": HEADER + ROW, name: text})
case("merge-overwrites-input", ["merge", "a.csv", "-o", "a.csv"], "-o", files={"a.csv": HEADER + ROW})

# --- Other commands.
case("schedule-bad", ["schedule", "--schedule", "Interleaved1F1B", "--pp", "2", "--microbatches", "5"],
     "--microbatches")
# Every command holds the run's size budget, and a generator's rule names the flag it concerns.
case("schedule-huge", ["schedule", "--schedule", "1F1B", "--pp", "2", "--microbatches",
                       "2147483647"], "--pp",
     message="--pp 2, --microbatches 2147483647: 1.3e+10 tasks (about 1.734 TiB); the limit is "
             "5.0e+07 tasks (--max-tasks)")
case("schedule-max-tasks", ["schedule", "--schedule", "1F1B", "--pp", "2", "--microbatches", "8",
                            "--max-tasks", "0"], "--max-tasks",
     message="--max-tasks: must be at least 1; got 0")
case("dual-pipe-odd", run_with("--schedule", "DualPipe", pp="3"), "--pp",
     message="--pp: DualPipe needs an even number of ranks (at least 2); got 3")
case("model-pp", ["model", "--model", "llama3-8b", "--pp", "100"], "--pp")
# The ideal cluster is sized to the run: a search over it needs --gpus (it divided by 0 once).
case("search-ideal-no-gpus", ["search", "--model", "gpt3-1.5b", "--platform", "ideal",
                              "--global-batch", "32"], "--gpus")
# --- ppsim search --baseline: one string of `ppsim run` options, split as a shell splits it.
SEARCH = ["search", "--model", "gpt3-1.5b", "--platform", "dgx-h100", "--nodes", "1",
          "--global-batch", "32", "--schedules", "1F1B", "--baseline"]
case("search-baseline-quote", SEARCH + ["--schedule '1F1B --pp 2"], "--baseline",
     message="--baseline: unterminated single quote opened at character 12; close it with '")
case("search-baseline-expansion", SEARCH + ["--schedule $SCHEDULE"], "--baseline")
case("search-baseline-huge", SEARCH + ["--pp " + ARG], "--baseline: --pp")
case("search-baseline-gpus", SEARCH + ["--schedule 1F1B --pp 2 --tp 2"], "--baseline",
     message="--baseline: tp 2 x pp 2 x cp 1 x dp 1 = 4 GPUs, but the candidates run on the "
             "search's 8 (--nodes 1 of dgx-h100); give the baseline 8 GPUs (its --tp, --pp, --cp "
             "or --dp)")
case("search-baseline-trace", SEARCH + ["--schedule 1F1B --pp 2 --dp 4 --timeline t.svg"],
     "--baseline: --timeline",
     message="--baseline: --timeline: the baseline writes no output file; it is simulated as the "
             "candidates are: run its command with `ppsim run` for one")
# --- ppsim calibrate: the measurements file, each entry's run string and value, and --calibration.
MRUN = "--schedule 1F1B --pp 2 --microbatches 2 --f 1ms --b 2ms --platform ideal"


def measurements(run=MRUN, value="iteration_time: 3ms"):
    return {"m.yaml": "measurements:\n  - run: %s\n    %s\n" % (run, value)}


case("calibrate-missing", ["calibrate", "nope.yaml"], "nope.yaml",
     message="nope.yaml: cannot read: No such file or directory")
case("calibrate-no-file", ["calibrate"], "ppsim calibrate")
case("calibrate-empty", ["calibrate", "m.yaml"], "m.yaml", files={"m.yaml": ""},
     message="m.yaml: measurements: none; give a list of entries, each a run and one measured value")
for i, text in enumerate(["measurements: 3\n", "measurements: [\n", "- a\n", BIG + "\n",
                          "measurements:\n  - {run: x, bogus: 1}\n", "\x00\xff\xfe" * 100,
                          "measurements:\n" + "  - run: x\n" * 5000]):
    case(f"calibrate-file-{i}", ["calibrate", "m.yaml"], "m.yaml", files={"m.yaml": text})
for i, value in enumerate(["", "iteration_time: abc", "iteration_time: -1s", "mfu: 1.5",
                           "mfu: nan", "tokens_per_s: -3", "peak_memory: 1e400GiB",
                           "samples_per_s: " + BIG, "iteration_time: 1s\n    mfu: 0.3"]):
    case(f"calibrate-value-{i}", ["calibrate", "m.yaml"], "m.yaml",
         files=measurements(value=value))
case("calibrate-two-values", ["calibrate", "m.yaml"], "m.yaml",
     files=measurements(value="iteration_time: 1s\n    mfu: 0.3"),
     message="m.yaml:2:5: measurements[0]: gives both iteration_time and mfu; give exactly one")
for i, run in enumerate(['""', '"--pp"', '"' + MRUN + ' --tpp 2"', "'" + MRUN + " \"x'",
                         '"' + MRUN + ' $HOME"', '"' + MRUN + ' ; rm -rf x"',
                         '"' + MRUN.replace("2 --f", "2147483647 --f") + '"',
                         '"' + MRUN + " " + ARG + '"',
                         '"' + MRUN + ' --calibration c.textproto"',
                         '"' + MRUN.replace("1F1B", "1F1B,GPipe") + '"', '"' + MRUN + ' extra"',
                         '"' + MRUN + ' --help"', '"--schedule 1F1B --pp 2 --microbatches 2"']):
    case(f"calibrate-run-{i}", ["calibrate", "m.yaml"], "m.yaml", files=measurements(run=run))
case("calibrate-run-unknown-flag", ["calibrate", "m.yaml"], "m.yaml",
     files=measurements(run='"' + MRUN + ' --tpp 2"'),
     message="m.yaml:2:10: run: --tpp: unknown option; did you mean --pp? see 'ppsim run --help' "
             "for the valid options")
case("calibrate-two-gpus", ["calibrate", "m.yaml"], "m.yaml",
     files={"m.yaml": "measurements:\n  - run: " + MRUN + "\n    iteration_time: 3ms\n"
                      "  - run: --model gpt3-1.5b --schedule 1F1B --pp 1 --microbatches 2 "
                      "--platform dgx-a100\n    iteration_time: 3ms\n"})
case("calibrate-output-is-input", ["calibrate", "m.yaml", "-o", "./m.yaml"], "-o",
     files=measurements())
case("calibrate-format", ["calibrate", "m.yaml", "--format", "csv"], "--format",
     files=measurements())
# A calibration file given to a run.
MODEL_RUN = ["run", "--model", "gpt3-1.5b", "--schedule", "1F1B", "--pp", "1", "--microbatches",
             "2", "--platform", "h100-node", "--engine", "critical-path", "--calibration",
             "c.textproto"]
for i, text in enumerate(["", "gpu: \"A100 SXM4 80GB\"\n", "gpu: \"H100 SXM\"\nset: \"bogus=1\"\n",
                          "gpu: \"H100 SXM\"\nset: \"gpu.matmul_efficiency=7\"\n",
                          "gpu: \"H100 SXM\"\nset: \"noequals\"\n",
                          "gpu: \"H100 SXM\"\nscale { path: \"gpu.memory\" factor: 2 }\n",
                          "gpu: \"H100 SXM\"\nscale { path: \"nic.bandwidth\" factor: 0 }\n",
                          "gpu: \"H100 SXM\"\nscale { path: \"intra_node.bandwidth\" factor: -inf }\n",
                          "gpu: \"H100 SXM\"\nmemory_reserve: \"lots\"\n", "gpu: " + BIG + "\n",
                          "bogus: 1\n", "\x00\xff" * 50]):
    # Values are located in the file; the file as a whole (unreadable, another GPU) at the flag.
    where = "c.textproto:" if 2 <= i <= 8 else "--calibration"
    case(f"calibration-{i}", MODEL_RUN, where, files={"c.textproto": text})
case("calibration-other-gpu", MODEL_RUN, "--calibration",
     files={"c.textproto": "gpu: \"A100 SXM4 80GB\"\n"},
     message="--calibration: c.textproto was fitted on A100 SXM4 80GB; this run's GPU is H100 SXM; "
             "calibrate on this GPU")
case("calibration-missing", MODEL_RUN, "--calibration",
     message="--calibration: c.textproto: cannot read: No such file or directory")
case("calibration-format", MODEL_RUN[:-1] + ["c.txt"], "--calibration",
     files={"c.txt": "gpu: x\n"})
# `ppsim profile`: PyTorch profiler traces (tests/data/profiler/bad holds the hand-made ones).
PROFILER_BAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "profiler",
                            "bad")


def profiler_bad(name):
    with open(os.path.join(PROFILER_BAD, name), "rb") as f:
        return f.read()


case("profile-truncated", ["profile", "t.json"], "t.json", files={"t.json": profiler_bad("truncated.json")},
     message="t.json:25:4: not JSON (syntax error while parsing object key - unexpected end of "
             "input; expected string literal); expected a PyTorch profiler trace: a JSON object with "
             "traceEvents, as export_chrome_trace writes it")
case("profile-truncated-gz", ["profile", "t.json.gz"], "t.json.gz",
     files={"t.json.gz": gzip.compress(profiler_bad("world_size/rank0.json"), mtime=0)[:-20]},
     message="t.json.gz: gzip stream cut short (318 bytes decompressed, not the size its end "
             "records); expected a gzipped trace, whole")
case("profile-not-gzip", ["profile", "t.json.gz"], "t.json.gz", files={"t.json.gz": b"{}"})
# (The 1 GiB decompression limit takes longer than a case may to reach: kineto_trace_test checks
# Gunzip's limit with a small one.)
case("profile-other-framework", ["profile", "o.json"], "o.json",
     files={"o.json": profiler_bad("other_framework.json")})
case("profile-world-size", ["profile", "r0.json", "r1.json"], "r1.json",
     files={"r0.json": profiler_bad("world_size/rank0.json"),
            "r1.json": profiler_bad("world_size/rank1.json")},
     message="r1.json: world_size 4, but r0.json has world_size 2; give traces of one run (its "
             "ranks agree on world_size)")
case("profile-no-info", ["profile", "a.json", "b.json"], "a.json",
     files={"a.json": profiler_bad("no_info/a.json"), "b.json": profiler_bad("no_info/b.json")})
case("profile-duplicate", ["profile", "a.json", "b.json"], "b.json",
     files={"a.json": profiler_bad("duplicate/a.json"), "b.json": profiler_bad("duplicate/b.json")},
     message="b.json: rank 0, as in a.json; give one trace per rank")
case("profile-overwrite-input", ["profile", "a.json", "-o", "a.json"], "-o",
     files={"a.json": profiler_bad("duplicate/a.json")},
     message="-o: 'a.json' is also an input of this command (a.json); choose another file")
case("profile-missing", ["profile", "nope.json"], "nope.json")
case("profile-not-object", ["profile", "n.json"], "n.json", files={"n.json": b"42"})
case("profile-events-not-list", ["profile", "n.json"], "n.json",
     files={"n.json": b'{"traceEvents": {"ph": "X"}}'})
case("profile-bad-rank", ["profile", "n.json"], "n.json",
     files={"n.json": b'{"distributedInfo": {"rank": -1}, "traceEvents": []}'})
# `ppsim profile`: Nsight Systems exports (SQLite), made here from the real one with python3's
# sqlite3 (tests/data/profiler/nsys/saxpy.sqlite).
NSYS_SAXPY = os.path.join(os.path.dirname(PROFILER_BAD), "nsys", "saxpy.sqlite")
NSYS_EXPECTED = "expected an Nsight Systems export (nsys export --type sqlite), whole"


def sqlite_bytes(statements, base=None):
    """A SQLite database: a copy of `base` (or an empty one) after `statements`."""
    import sqlite3
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "db.sqlite")
        if base:
            shutil.copyfile(base, path)
        db = sqlite3.connect(path)
        for statement in statements:
            db.execute(statement)
        db.commit()
        db.close()
        with open(path, "rb") as f:
            return f.read()


with open(NSYS_SAXPY, "rb") as f:
    SAXPY = f.read()
case("profile-nsys-truncated", ["profile", "t.sqlite"], "t.sqlite",
     files={"t.sqlite": SAXPY[:len(SAXPY) // 2]})
case("profile-nsys-header-only", ["profile", "h.sqlite"], "h.sqlite",
     files={"h.sqlite": b"SQLite format 3\0" + b"\xff" * 200},
     message="h.sqlite: not a readable SQLite database (file is not a database, reading its "
             "tables); " + NSYS_EXPECTED)
case("profile-nsys-other-schema", ["profile", "o.sqlite"], "o.sqlite",
     files={"o.sqlite": sqlite_bytes(["CREATE TABLE people (name TEXT)",
                                      "INSERT INTO people VALUES ('x')"])},
     message="o.sqlite: not an Nsight Systems export (no StringIds table); ppsim profile reads "
             "the SQLite files of nsys export --type sqlite, and PyTorch profiler traces (.json, "
             ".json.gz)")
# The first kernel's short name (StringIds id 671 in saxpy.sqlite) removed.
case("profile-nsys-missing-name", ["profile", "k.sqlite"], "k.sqlite",
     files={"k.sqlite": sqlite_bytes(
         ["DELETE FROM StringIds WHERE id = (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL "
          "ORDER BY rowid LIMIT 1)"], NSYS_SAXPY)},
     message="k.sqlite: CUPTI_ACTIVITY_KIND_KERNEL row 1: shortName 671 is not in StringIds; "
             + NSYS_EXPECTED)
case("profile-nsys-end-before-start", ["profile", "e.sqlite"], "e.sqlite",
     files={"e.sqlite": sqlite_bytes(
         ["UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start - 1 WHERE rowid = 2"], NSYS_SAXPY)})
case("profile-nsys-two-processes", ["profile", "p.sqlite"], "p.sqlite",
     files={"p.sqlite": sqlite_bytes(
         ["UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = globalPid + (1 << 24) "
          "WHERE rowid = 1"], NSYS_SAXPY)})
case("profile-nsys-bad-rank", ["profile", "r.sqlite"], "r.sqlite",
     files={"r.sqlite": sqlite_bytes(
         ["INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'x', 'DeviceEnvironment', 610, "
          "'RANK=3;WORLD_SIZE=2')"], NSYS_SAXPY)},
     message="r.sqlite: TARGET_INFO_SYSTEM_ENV DeviceEnvironment WORLD_SIZE='2' with RANK=3; "
             "expected a whole number above the rank")
case("profile-nsys-mixed", ["profile", "a.json", "b.sqlite"], "b.sqlite",
     files={"a.json": profiler_bad("duplicate/a.json"), "b.sqlite": SAXPY})
case("platforms-unknown", ["platforms", ARG], "ppsim platforms")
case("help-unknown", ["help", ARG], "ppsim help")
case("command-unknown", [ARG], "ppsim:")


def location_ok(line, where):
    return line.startswith(where)


def run_case(ppsim, workdir, c):
    folder = os.path.join(workdir, c["name"].replace("/", "_")[:80])
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, text in c["files"].items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
    def limit():
        if not SANITIZED:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    start = time.monotonic()
    process = subprocess.Popen([ppsim] + c["args"], cwd=folder, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, preexec_fn=limit)
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        return "ran away (over 30 s)"
    wall = time.monotonic() - start
    problems = []
    if c["code"] == 0:  # an input that is valid after all: it runs, quickly, within the limit
        if process.returncode != 0:
            problems.append(f"exit {process.returncode}: {err[:300]!r}")
        if wall > TIME_LIMIT_S:
            problems.append(f"took {wall:.2f} s")
        return "; ".join(problems)
    if process.returncode != c["code"]:
        problems.append(f"exit {process.returncode}, expected {c['code']}")
    if out:
        problems.append(f"stdout not empty: {out[:200]!r}")
    text = err.decode("utf-8", "replace")
    lines = text.split("\n")
    if not text.endswith("\n") or not lines[0]:
        problems.append(f"stderr is not lines: {text[:200]!r}")
    for line in lines[:-1]:
        if not location_ok(line, c["where"]):
            problems.append(f"line not at {c['where']!r}: {line[:200]!r}")
        if len(line.encode()) > 2000 + 30:
            problems.append(f"line of {len(line)} characters")
        if any(ord(ch) < 32 and ch != "\t" for ch in line):
            problems.append(f"control character in {line[:200]!r}")
    if c["message"] is not None and text != c["message"] + "\n":
        problems.append(f"message {text!r}, expected {c['message']!r}")
    if wall > TIME_LIMIT_S:
        problems.append(f"took {wall:.2f} s")
    return "; ".join(problems)


def main():
    ppsim, workdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    only = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "-k" else ""
    os.makedirs(workdir, exist_ok=True)
    failures = 0
    ran = 0
    for c in CASES:
        if only not in c["name"]:
            continue
        ran += 1
        problem = run_case(ppsim, workdir, c)
        if problem:
            failures += 1
            print(f"FAIL {c['name']}: {problem}")
    print(f"hostile: {ran} cases, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
