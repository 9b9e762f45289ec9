#include "interop/megatron_args.h"

#include <algorithm>
#include <map>

#include "base/escape.h"
#include "base/files.h"
#include "base/names.h"
#include "base/numbers.h"
#include "base/shell_words.h"
#include "config/config_file.h"
#include "interop/megatron_layout.h"
#include "models/model.pb.h"

namespace ppsim {
namespace {

// An argument as given: its values (none for a switch) and where it was written.
struct Given {
  std::vector<std::string> values;
  std::string where;
};
using Args = std::map<std::string, Given, std::less<>>;

// Where each word starts, "FILE:LINE:COL", found by looking for the word's text from the end of
// the word before (a quoted word is not found as written: it gets the place after the previous
// word). Without a file every word is at `where`.
std::vector<std::string> WordPlaces(std::string_view text, const std::vector<std::string>& words,
                                    const std::string& file, const std::string& where) {
  std::vector<std::string> places;
  size_t cursor = 0;
  for (const std::string& word : words) {
    if (file.empty()) {
      places.push_back(where);
      continue;
    }
    const size_t at = word.empty() ? std::string_view::npos : text.find(word, cursor);
    const size_t start = at == std::string_view::npos ? cursor : at;
    if (at != std::string_view::npos) cursor = at + word.size();
    const size_t line_start = text.rfind('\n', start == 0 ? 0 : start - 1);
    const int64_t line = 1 + std::count(text.begin(), text.begin() + start, '\n');
    const size_t column =
        start - (line_start == std::string_view::npos || start == 0 ? 0 : line_start + 1) + 1;
    places.push_back(file + ":" + std::to_string(line) + ":" + std::to_string(column));
  }
  return places;
}

Status UnknownArgument(const std::string& place, const std::string& flag) {
  std::vector<std::string> flags;
  for (const MegatronArgument& row : MegatronArguments()) flags.emplace_back(row.flag);
  const std::string close = ClosestName(flag, flags);
  return Status::InvalidInput(
      place + ": " + Printable(flag) + ": unknown Megatron-LM argument" +
      (close.empty() ? "" : "; did you mean " + close + "?") +
      "; ppsim refuses what it does not know rather than drop it (README, --megatron, lists the "
      "arguments it reads)");
}

// The words as arguments: each a known flag ("--name" or "--name=value") with its values.
Status CollectArgs(const std::vector<std::string>& words, const std::vector<std::string>& places,
                   Args* args) {
  for (size_t i = 0; i < words.size();) {
    const std::string& word = words[i];
    const std::string& place = places[i];
    if (!word.starts_with("--")) {
      return Status::InvalidInput(place + ": " + Quoted(word) +
                                  ": expected a Megatron-LM argument (--name), or a value after "
                                  "one that takes a value");
    }
    const size_t equals = word.find('=');
    const std::string flag = word.substr(0, equals);
    const MegatronArgument* row = FindMegatronArgument(flag);
    if (row == nullptr) return UnknownArgument(place, flag);
    Given given{{}, place};
    ++i;
    if (equals != std::string::npos) {
      if (row->arity == MegatronArity::kSwitch) {
        return Status::InvalidInput(place + ": " + flag + ": a switch takes no value; give " +
                                    flag + " alone");
      }
      given.values.push_back(word.substr(equals + 1));
    } else if (row->arity != MegatronArity::kSwitch) {
      while (i < words.size() && !words[i].starts_with("--")) {
        given.values.push_back(words[i++]);
        if (row->arity == MegatronArity::kValue) break;
      }
      if (given.values.empty()) {
        return Status::InvalidInput(place + ": " + flag + ": missing value; " + flag +
                                    (row->arity == MegatronArity::kList
                                         ? " takes one or more values"
                                         : " takes one value"));
      }
    }
    (*args)[flag] = std::move(given);  // the last wins, as with argparse
  }
  return Status();
}

// Typed access to the arguments, with Megatron's defaults; messages start where the argument was
// written ("--megatron" for one not given).
class MegatronReader {
 public:
  MegatronReader(Args args, std::string where) : args_(std::move(args)), where_(std::move(where)) {}

  bool Has(std::string_view flag) const { return args_.find(flag) != args_.end(); }
  const std::string& Text(std::string_view flag) const {
    return args_.find(flag)->second.values.front();
  }
  const std::vector<std::string>& Values(std::string_view flag) const {
    return args_.find(flag)->second.values;
  }
  std::string Where(std::string_view flag) const {
    const auto it = args_.find(flag);
    return (it == args_.end() ? where_ : it->second.where) + ": " + std::string(flag);
  }
  Status Invalid(std::string_view flag, std::string_view what) const {
    return Status::InvalidInput(Where(flag) + ": " + std::string(what));
  }
  // A whole number at least `minimum`; `fallback` when not given.
  Status Whole(std::string_view flag, int64_t fallback, int64_t minimum, int64_t* value) const {
    *value = fallback;
    if (!Has(flag)) return Status();
    if (!ParseWhole(Text(flag), value) || *value > std::numeric_limits<int32_t>::max()) {
      return Invalid(flag, "expected a whole number, got " + Quoted(Text(flag)));
    }
    if (*value < minimum) {
      return Invalid(
          flag, "must be at least " + std::to_string(minimum) + "; got " + std::to_string(*value));
    }
    return Status();
  }
  Status Required(std::string_view flag, int64_t* value) const {
    if (!Has(flag)) return Invalid(flag, "missing; Megatron-LM needs it, and so does ppsim");
    return Whole(flag, 0, 1, value);
  }
  // One of `valid`; `fallback` when not given.
  Status Choice(std::string_view flag, std::string_view fallback,
                const std::vector<std::string>& valid, std::string* value) const {
    *value = Has(flag) ? Text(flag) : std::string(fallback);
    if (std::find(valid.begin(), valid.end(), *value) != valid.end()) return Status();
    return Invalid(flag, UnknownName("value", *value, valid));
  }
  const Args& args() const { return args_; }
  const std::string& where() const { return where_; }

 private:
  Args args_;
  std::string where_;
};

// The decoder layers' values in Megatron's --moe-layer-freq list syntax, a Python expression of
// lists, '+', '*' and parentheses ("([0]*3+[1]*58)"), as megatron's _eval_pattern evaluates it.
class PatternParser {
 public:
  explicit PatternParser(std::string_view text) : text_(text) {}
  bool Parse(std::vector<int64_t>* out) {
    if (!Sum(out)) return false;
    Blanks();
    return i_ == text_.size();
  }

 private:
  static constexpr size_t kMaxItems = 1'000'000;
  void Blanks() {
    while (i_ < text_.size() && text_[i_] == ' ') ++i_;
  }
  bool Eat(char c) {
    Blanks();
    if (i_ < text_.size() && text_[i_] == c) return ++i_, true;
    return false;
  }
  bool Number(int64_t* n) {
    Blanks();
    const size_t start = i_;
    while (i_ < text_.size() && text_[i_] >= '0' && text_[i_] <= '9' && i_ - start < 9) ++i_;
    return i_ > start && ParseWhole(text_.substr(start, i_ - start), n);
  }
  bool Sum(std::vector<int64_t>* out) {
    if (!Product(out)) return false;
    while (Eat('+')) {
      std::vector<int64_t> more;
      if (!Product(&more) || out->size() + more.size() > kMaxItems) return false;
      out->insert(out->end(), more.begin(), more.end());
    }
    return true;
  }
  bool Product(std::vector<int64_t>* out) {
    if (!Atom(out)) return false;
    while (Eat('*')) {
      int64_t n = 0;
      if (!Number(&n) || out->size() * static_cast<size_t>(n) > kMaxItems) return false;
      std::vector<int64_t> one = *out;
      out->clear();
      for (int64_t k = 0; k < n; ++k) out->insert(out->end(), one.begin(), one.end());
    }
    return true;
  }
  bool Atom(std::vector<int64_t>* out) {
    if (Eat('(')) {
      // Nesting is bounded: the parser recurses once per parenthesis.
      if (++depth_ > 100) return false;
      const bool ok = Sum(out) && Eat(')');
      --depth_;
      return ok;
    }
    if (!Eat('[')) return false;
    if (Eat(']')) return true;
    do {
      int64_t n = 0;
      if (!Number(&n)) return false;
      out->push_back(n);
    } while (Eat(','));
    return Eat(']');
  }
  std::string_view text_;
  size_t i_ = 0;
  int depth_ = 0;
};

// --moe-layer-freq: how many leading layers are dense. ppsim's MoE layers follow the dense ones.
Status MoeDenseLayers(const MegatronReader& r, int64_t layers, int64_t* dense) {
  constexpr std::string_view kFlag = "--moe-layer-freq";
  *dense = 0;
  if (!r.Has(kFlag)) return Status();
  const std::string& text = r.Text(kFlag);
  const std::string shape =
      "ppsim models dense layers first, then MoE layers: give 1 (every layer MoE) or "
      "[0]*K+[1]*M with K + M = --num-layers";
  std::vector<int64_t> pattern;
  if (text.find('[') == std::string::npos) {
    int64_t every = 0;
    RETURN_IF_ERROR(r.Whole(kFlag, 1, 1, &every));
    if (every == 1) return Status();
    return r.Invalid(kFlag, "a MoE layer every " + std::to_string(every) +
                                " layers (dense layers between them) is not modelled; " + shape);
  }
  if (!PatternParser(text).Parse(&pattern)) {
    return r.Invalid(
        kFlag, "cannot read " + Quoted(text) + " as Megatron's list syntax (e.g. ([0]*3+[1]*58))");
  }
  if (static_cast<int64_t>(pattern.size()) != layers) {
    return r.Invalid(kFlag, "the pattern has " + std::to_string(pattern.size()) +
                                " entries; --num-layers is " + std::to_string(layers));
  }
  const auto first_moe = std::find(pattern.begin(), pattern.end(), 1);
  const bool ordered = std::all_of(pattern.begin(), first_moe, [](int64_t v) { return v == 0; }) &&
                       std::all_of(first_moe, pattern.end(), [](int64_t v) { return v == 1; });
  if (!ordered || first_moe == pattern.end()) return r.Invalid(kFlag, shape);
  *dense = first_moe - pattern.begin();
  return Status();
}

}  // namespace

namespace {

// What the steps share: the parallel degrees and the layer placement.
struct Shape {
  int64_t layers = 0;
  int64_t tp = 1, pp = 1, cp = 1, ep = 1, vp = 1;
  int64_t max_stage_layers = 0;  // the most decoder layers of a virtual stage
};

void Set(MegatronRun* run, std::string field, std::string value, std::string_view flag) {
  run->settings.push_back({std::move(field), std::move(value), std::string(flag)});
}

std::string JoinWhole(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

// Layers of each virtual stage, in ppsim's (and Megatron's) order vpp x PP + pp, from
// --decoder-first/last-pipeline-num-layers: the rest split evenly over the middle ranks, and each
// rank's layers evenly over its virtual stages (megatron/core/transformer/transformer_block.py,
// get_num_layers_to_build).
Status UnevenStages(const MegatronReader& r, Shape* s, std::vector<int64_t>* stages) {
  constexpr std::string_view kFirst = "--decoder-first-pipeline-num-layers";
  constexpr std::string_view kLast = "--decoder-last-pipeline-num-layers";
  std::vector<int64_t> ranks(s->pp, -1);
  int64_t rest = s->layers, left = s->pp;
  for (auto [flag, rank] : {std::pair{kFirst, int64_t{0}}, {kLast, s->pp - 1}}) {
    if (!r.Has(flag)) continue;
    if (r.Has("--account-for-embedding-in-pipeline-split") ||
        r.Has("--account-for-loss-in-pipeline-split")) {
      return r.Invalid(flag,
                       "cannot be combined with --account-for-*-in-pipeline-split, as "
                       "Megatron asserts");
    }
    if (s->pp < 2) return r.Invalid(flag, "needs --pipeline-model-parallel-size 2 or more");
    RETURN_IF_ERROR(r.Whole(flag, 0, 0, &ranks[rank]));
    rest -= ranks[rank];
    --left;
  }
  if (rest < 0 || (left == 0 ? rest != 0 : rest % left != 0)) {
    return r.Invalid(r.Has(kFirst) ? kFirst : kLast,
                     "the other " + std::to_string(rest) + " layers do not split evenly over the " +
                         std::to_string(left) + " middle pipeline ranks, as Megatron requires");
  }
  for (int64_t& n : ranks) {
    if (n < 0) n = rest / left;
    if (n % s->vp != 0) {
      return r.Invalid(r.Has(kFirst) ? kFirst : kLast,
                       "a rank's " + std::to_string(n) + " layers do not split over its " +
                           std::to_string(s->vp) + " virtual stages, as Megatron requires");
    }
  }
  for (int64_t v = 0; v < s->vp; ++v) {
    for (int64_t n : ranks) stages->push_back(n / s->vp);
  }
  return Status();
}

// The layer placement: a layout, uneven first and last ranks, or an even split (with the
// embedding and the loss counted as layers), each checked as Megatron checks it.
Status Placement(const MegatronReader& r, Shape* s, MegatronRun* run) {
  constexpr std::string_view kLayout = "--pipeline-model-parallel-layout";
  std::vector<int64_t> stages;
  if (r.Has(kLayout)) {
    for (std::string_view other :
         {"--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
          "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
          "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"}) {
      if (r.Has(other)) {
        return r.Invalid(kLayout, "cannot be combined with " + std::string(other) +
                                      ", as Megatron asserts: the layout places every layer");
      }
    }
    int64_t mtp = 0;
    RETURN_IF_ERROR(r.Whole("--mtp-num-layers", 0, 0, &mtp));
    MegatronLayout layout;
    RETURN_IF_ERROR(ParseMegatronLayout(r.Text(kLayout), static_cast<int32_t>(s->pp),
                                        static_cast<int32_t>(s->layers), static_cast<int32_t>(mtp),
                                        r.Where(kLayout), &layout));
    s->vp = layout.virtual_stages_per_rank;
    if (mtp > 0 && layout.mtp_layers.back() != mtp) {
      return r.Invalid(kLayout, "MTP layers (m) outside the pipeline's last stage are not "
                                "modelled; ppsim places them with the loss (L)");
    }
    stages.assign(layout.decoder_layers.begin(), layout.decoder_layers.end());
  } else if (r.Has("--decoder-first-pipeline-num-layers") ||
             r.Has("--decoder-last-pipeline-num-layers")) {
    RETURN_IF_ERROR(UnevenStages(r, s, &stages));
  } else {
    const bool embedding = r.Has("--account-for-embedding-in-pipeline-split");
    const bool loss = r.Has("--account-for-loss-in-pipeline-split");
    const int64_t slots = s->layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
    if (slots % (s->pp * s->vp) != 0) {
      return r.Invalid("--num-layers",
                       std::to_string(slots) + " layers" +
                           (embedding || loss ? " (with the embedding or loss counted)" : "") +
                           " do not split evenly over " + std::to_string(s->pp * s->vp) +
                           " pipeline stages, as Megatron requires; give "
                           "--decoder-first-pipeline-num-layers or "
                           "--pipeline-model-parallel-layout for an uneven split");
    }
    if (embedding)
      Set(run, "embedding_as_layer", "true", "--account-for-embedding-in-pipeline-split");
    if (loss) Set(run, "loss_as_layer", "true", "--account-for-loss-in-pipeline-split");
    s->max_stage_layers = slots / (s->pp * s->vp);
    return Status();
  }
  s->max_stage_layers = *std::max_element(stages.begin(), stages.end());
  Set(run, "layers_per_stage", JoinWhole(stages),
      r.Has(kLayout) ? kLayout : "--decoder-first-pipeline-num-layers");
  return Status();
}

// Virtual pipeline stages per rank from either of Megatron's two ways of giving them.
Status VirtualStages(const MegatronReader& r, Shape* s) {
  constexpr std::string_view kLayers = "--num-layers-per-virtual-pipeline-stage";
  constexpr std::string_view kStages = "--num-virtual-stages-per-pipeline-rank";
  if (r.Has(kLayers) && r.Has(kStages)) {
    return r.Invalid(kStages, "give it or " + std::string(kLayers) + ", not both");
  }
  if (r.Has(kStages)) return r.Whole(kStages, 1, 1, &s->vp);
  if (!r.Has(kLayers)) return Status();
  int64_t per_stage = 0;
  RETURN_IF_ERROR(r.Whole(kLayers, 1, 1, &per_stage));
  if (s->layers % (s->pp * per_stage) != 0) {
    return r.Invalid(kLayers, std::to_string(per_stage) + " layers per virtual stage on " +
                                  std::to_string(s->pp) + " pipeline ranks do not divide the " +
                                  std::to_string(s->layers) + " layers");
  }
  s->vp = s->layers / (s->pp * per_stage);
  return Status();
}

// --cp-comm-type: one value, or one per layer (Megatron lets layers differ); ppsim models one
// type for every layer, so a list must repeat one value. a2a+p2p takes its inner group's size
// from --hierarchical-context-parallel-sizes A B (A the all-to-all group, B the p2p ring; Megatron
// asserts A B = cp, and needs the sizes with a2a+p2p).
Status CpCommTypeArg(const MegatronReader& r, int64_t cp, MegatronRun* run) {
  constexpr std::string_view kSizes = "--hierarchical-context-parallel-sizes";
  std::vector<int64_t> sizes;
  if (r.Has(kSizes)) {
    for (const std::string& text : r.Values(kSizes)) {
      int64_t size = 0;
      if (!ParseWhole(text, &size) || size < 1 || size > cp) {
        return r.Invalid(kSizes, "expected whole numbers from 1 to --context-parallel-size " +
                                     std::to_string(cp) + ", got " + Quoted(text));
      }
      sizes.push_back(size);
    }
    if (sizes.size() != 2 || sizes[0] * sizes[1] != cp) {
      return r.Invalid(kSizes,
                       "expected two sizes A B (the a2a group, the p2p ring) whose "
                       "product is --context-parallel-size " +
                           std::to_string(cp) + ", as Megatron asserts");
    }
  }
  if (!r.Has("--cp-comm-type")) return Status();
  const std::vector<std::string>& types = r.Values("--cp-comm-type");
  for (const std::string& type : types) {
    if (type != types.front()) {
      return r.Invalid("--cp-comm-type", "layers of different types (" + Quoted(types.front()) +
                                             ", " + Quoted(type) +
                                             ") are not modelled; give one type for every layer");
    }
  }
  if (types.front() == "a2a+p2p") {
    if (sizes.empty()) {
      return r.Invalid("--cp-comm-type",
                       "a2a+p2p needs --hierarchical-context-parallel-sizes A B, as Megatron "
                       "asserts");
    }
    Set(run, "cp_a2a_size", std::to_string(sizes[0]), kSizes);
  }
  Set(run, "cp_comm_type", types.front(), "--cp-comm-type");
  return Status();
}

// The ZeRO stage: --use-distributed-optimizer 1; PyTorch FSDP2 (--use-torch-fsdp2) 3; Megatron-FSDP
// (--use-megatron-fsdp) by its
// --data-parallel-sharding-strategy: optim 1, optim_grads 2, optim_grads_params 3 (costed as
// FSDP2 is: models/transformer.h), no_shard the distributed optimizer's stage. The strategy
// needs Megatron-FSDP.
Status MapMegatronFsdp(const MegatronReader& r, MegatronRun* run) {
  constexpr std::string_view kStrategy = "--data-parallel-sharding-strategy";
  constexpr std::string_view kDistributed = "--use-distributed-optimizer";
  std::string strategy = "no_shard";
  if (r.Has("--use-megatron-fsdp")) {
    RETURN_IF_ERROR(r.Choice(kStrategy, "no_shard",
                             {"no_shard", "optim", "optim_grads", "optim_grads_params"},
                             &strategy));
  } else if (r.Has(kStrategy)) {
    return r.Invalid(kStrategy, "applies with --use-megatron-fsdp");
  }
  if (r.Has("--use-torch-fsdp2")) {
    if (r.Has("--use-megatron-fsdp")) {
      return r.Invalid("--use-torch-fsdp2",
                       "--use-megatron-fsdp is given too; give one (both shard the "
                       "data-parallel state)");
    }
    Set(run, "zero", "3", "--use-torch-fsdp2");
  } else if (strategy != "no_shard") {
    const char* zero = strategy == "optim" ? "1" : strategy == "optim_grads" ? "2" : "3";
    Set(run, "zero", zero, std::string(kStrategy));
  } else if (r.Has(kDistributed)) {
    Set(run, "zero", "1", std::string(kDistributed));
  }
  return Status();
}

Status Parallel(const MegatronReader& r, const MegatronDegrees& given, Shape* s, MegatronRun* run) {
  RETURN_IF_ERROR(r.Required("--num-layers", &s->layers));
  RETURN_IF_ERROR(r.Whole("--tensor-model-parallel-size", 1, 1, &s->tp));
  RETURN_IF_ERROR(r.Whole("--pipeline-model-parallel-size", 1, 1, &s->pp));
  RETURN_IF_ERROR(r.Whole("--context-parallel-size", 1, 1, &s->cp));
  RETURN_IF_ERROR(r.Whole("--expert-model-parallel-size", 1, 1, &s->ep));
  // The request's own degrees win (checked by the request where it gives them).
  for (auto [degree, value] :
       {std::pair{&s->tp, given.tp}, {&s->pp, given.pp}, {&s->cp, given.cp}, {&s->ep, given.ep}}) {
    if (value > 0) *degree = value;
  }
  Set(run, "tp", std::to_string(s->tp), "--tensor-model-parallel-size");
  Set(run, "pp", std::to_string(s->pp), "--pipeline-model-parallel-size");
  if (s->cp > 1) Set(run, "cp", std::to_string(s->cp), "--context-parallel-size");
  RETURN_IF_ERROR(CpCommTypeArg(r, s->cp, run));
  if (s->ep > 1) Set(run, "ep", std::to_string(s->ep), "--expert-model-parallel-size");
  run->gpus_per_pipeline = s->tp * s->pp * s->cp;
  RETURN_IF_ERROR(VirtualStages(r, s));
  // The bounds of a model file (models/transformer_file.cc), before anything is sized by them.
  constexpr int64_t kMaxLayers = 100'000;
  if (s->layers > kMaxLayers) {
    return r.Invalid("--num-layers", "must be at most " + std::to_string(kMaxLayers) + "; got " +
                                         std::to_string(s->layers));
  }
  if (s->pp * s->vp > s->layers + 2) {
    return r.Invalid("--pipeline-model-parallel-size",
                     std::to_string(s->pp * s->vp) + " pipeline stages for " +
                         std::to_string(s->layers) + " layers; each stage needs a layer");
  }
  RETURN_IF_ERROR(Placement(r, s, run));
  const bool interleaved = s->pp > 1 && s->vp > 1;
  Set(run, "schedule", interleaved ? "Megatron-Interleaved" : "1F1B",
      interleaved ? "--num-virtual-stages-per-pipeline-rank" : "--pipeline-model-parallel-size");
  if (interleaved)
    Set(run, "stages_per_rank", std::to_string(s->vp), "--num-virtual-stages-per-pipeline-rank");
  constexpr std::string_view kGroup = "--microbatch-group-size-per-virtual-pipeline-stage";
  if (r.Has(kGroup)) {
    int64_t group = 0;
    RETURN_IF_ERROR(r.Whole(kGroup, 1, 1, &group));
    if (!interleaved) return r.Invalid(kGroup, "applies to virtual pipeline stages only");
    Set(run, "microbatch_group_size", std::to_string(group), kGroup);
  }
  constexpr std::string_view kNoOverlap = "--no-overlap-p2p-communication";
  constexpr std::string_view kA2aOverlap = "--overlap-moe-expert-parallel-comm";
  if (r.Has(kA2aOverlap)) {
    // sim/p2p_calls.h lowers Megatron's calls for single F and B actions only.
    Set(run, "p2p_mode", "eager", kA2aOverlap);
    run->notes.push_back(std::string(kA2aOverlap) +
                         ": Megatron's p2p calls around its combined forward-backward steps are "
                         "not modelled; the pipeline transfers run as --p2p-mode eager");
  } else {
    Set(run, "p2p_mode", r.Has(kNoOverlap) ? "megatron-no-overlap" : "megatron", kNoOverlap);
  }
  // Megatron turns it off at TP 1; the request does so once its own --tp is known.
  const bool sp = r.Has("--sequence-parallel") && s->tp > 1;
  if (r.Has("--sequence-parallel")) Set(run, "sequence_parallel", "true", "--sequence-parallel");
  if (r.Has("--tp-comm-overlap")) {
    if (!sp)
      return r.Invalid("--tp-comm-overlap",
                       "needs --sequence-parallel with TP 2 or more, as Megatron asserts");
    Set(run, "tp_comm_overlap", "true", "--tp-comm-overlap");
  }
  // Megatron's own rules for these two are the request's (experiments/request.cc).
  for (std::string_view flag : {"--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute"}) {
    if (!r.Has(flag)) continue;
    std::string field(flag.substr(2));
    for (char& c : field) c = c == '-' ? '_' : c;
    Set(run, field, "true", flag);
  }
  return MapMegatronFsdp(r, run);
}

}  // namespace

namespace {

// The vocabulary: --vocab-size, or the GPT-2 BPE tokenizer's 50,257 tokens; padded to a multiple
// of --make-vocab-size-divisible-by x TP as Megatron pads it (build_tokenizer.py,
// vocab_size_with_padding).
Status Vocabulary(const MegatronReader& r, const Shape& s, MegatronRun* run, int64_t* padded) {
  constexpr int64_t kGpt2Tokens = 50257;  // GPT-2's BPE vocabulary (gpt2-vocab.json)
  int64_t vocab = 0;
  const std::string type = r.Has("--tokenizer-type") ? r.Text("--tokenizer-type") : "";
  if (r.Has("--vocab-size")) {
    RETURN_IF_ERROR(r.Whole("--vocab-size", 0, 1, &vocab));
  } else if (type == "GPT2BPETokenizer") {
    vocab = kGpt2Tokens;
  } else if (type.empty() && r.Has("--vocab-file") && r.Has("--merge-file")) {
    vocab = kGpt2Tokens;
    run->notes.push_back(
        "--vocab-file and --merge-file without --tokenizer-type: GPT-2 BPE, "
        "50,257 tokens");
  } else {
    return r.Invalid("--vocab-size", "missing; the vocabulary of " +
                                         (type.empty() ? std::string("this tokenizer")
                                                       : "--tokenizer-type " + type) +
                                         " is in its files, which ppsim does not read: give "
                                         "--vocab-size (GPT2BPETokenizer alone is known: 50,257)");
  }
  int64_t divisible = 0;
  RETURN_IF_ERROR(r.Whole("--make-vocab-size-divisible-by", 128, 1, &divisible));
  const int64_t multiple = divisible * s.tp;
  *padded = (vocab + multiple - 1) / multiple * multiple;
  if (*padded != vocab) {
    run->notes.push_back("vocabulary " + std::to_string(vocab) + " padded to " +
                         std::to_string(*padded) + " (a multiple of " + std::to_string(multiple) +
                         "), as Megatron pads it");
  }
  return Status();
}

// Attention: heads, grouped-query attention, channels per head, or multi-latent attention.
Status Attention(const MegatronReader& r, const Shape& s, int64_t hidden,
                 proto::TransformerModel* m, MegatronRun* run) {
  int64_t heads = 0, groups = 0;
  RETURN_IF_ERROR(r.Required("--num-attention-heads", &heads));
  m->set_heads(static_cast<int32_t>(heads));
  RETURN_IF_ERROR(r.Whole("--num-query-groups", 1, 1, &groups));
  const bool gqa = r.Has("--group-query-attention");
  if (!gqa && r.Has("--num-query-groups")) {
    run->notes.push_back(
        "--num-query-groups: unused without --group-query-attention, as in Megatron");
  }
  m->set_kv_heads(static_cast<int32_t>(gqa ? groups : heads));
  if (heads % s.tp != 0) {
    return r.Invalid("--tensor-model-parallel-size",
                     std::to_string(s.tp) + " does not divide the " + std::to_string(heads) +
                         " attention heads (--num-attention-heads); Megatron asserts it does");
  }
  if (gqa && groups % s.tp != 0) {
    return r.Invalid("--num-query-groups", std::to_string(groups) +
                                               " groups are not divisible by "
                                               "--tensor-model-parallel-size " +
                                               std::to_string(s.tp));
  }
  if (r.Has("--kv-channels")) {
    int64_t channels = 0;
    RETURN_IF_ERROR(r.Whole("--kv-channels", 0, 1, &channels));
    m->set_head_dim(channels);
  } else if (hidden % heads != 0) {
    return r.Invalid("--num-attention-heads", std::to_string(heads) +
                                                  " heads do not divide "
                                                  "--hidden-size " +
                                                  std::to_string(hidden) + "; give --kv-channels");
  }
  m->set_qkv_bias(r.Has("--add-qkv-bias"));
  m->set_qk_norm(r.Has("--qk-layernorm"));
  if (!r.Has("--multi-latent-attention")) return Status();
  if (gqa)
    return r.Invalid("--multi-latent-attention",
                     "excludes --group-query-attention, as Megatron asserts");
  int64_t q = 0, kv = 0, nope = 0, rope = 0, v = 0;
  RETURN_IF_ERROR(r.Whole("--q-lora-rank", 0, 1, &q));
  RETURN_IF_ERROR(r.Whole("--kv-lora-rank", 32, 1, &kv));
  RETURN_IF_ERROR(r.Whole("--qk-head-dim", 128, 1, &nope));
  RETURN_IF_ERROR(r.Whole("--qk-pos-emb-head-dim", 64, 0, &rope));
  RETURN_IF_ERROR(r.Whole("--v-head-dim", 128, 1, &v));
  m->set_attention(proto::TransformerModel::MLA);
  m->set_kv_heads(m->heads());
  m->set_q_lora_rank(q);
  m->set_kv_lora_rank(kv);
  m->set_qk_nope_head_dim(nope);
  m->set_qk_rope_head_dim(rope);
  m->set_v_head_dim(v);
  return Status();
}

// Mixture of experts: experts, top-k, their sizes, which layers, the dispatcher modelled.
Status Experts(const MegatronReader& r, const Shape& s, proto::TransformerModel* m) {
  if (!r.Has("--num-experts")) return Status();
  int64_t experts = 0, topk = 0, ffn = 0, shared = 0, dense = 0, etp = 0;
  RETURN_IF_ERROR(r.Whole("--num-experts", 0, 1, &experts));
  RETURN_IF_ERROR(r.Whole("--moe-router-topk", 2, 1, &topk));
  RETURN_IF_ERROR(r.Whole("--moe-ffn-hidden-size", m->ffn_hidden(), 1, &ffn));
  RETURN_IF_ERROR(r.Whole("--moe-shared-expert-intermediate-size", 0, 0, &shared));
  RETURN_IF_ERROR(MoeDenseLayers(r, s.layers, &dense));
  RETURN_IF_ERROR(r.Whole("--expert-tensor-parallel-size", s.tp, 1, &etp));
  if (etp != 1) {
    return r.Invalid("--expert-tensor-parallel-size",
                     std::to_string(etp) +
                         (r.Has("--expert-tensor-parallel-size")
                              ? ""
                              : " (Megatron's default: the tensor-parallel size)") +
                         "; ppsim models expert tensor parallelism 1 (each expert whole on one "
                         "GPU): give --expert-tensor-parallel-size 1");
  }
  if (shared % ffn != 0) {
    return r.Invalid("--moe-shared-expert-intermediate-size",
                     std::to_string(shared) + " is not a whole number of experts of " +
                         std::to_string(ffn) +
                         " (--moe-ffn-hidden-size); ppsim models shared "
                         "experts of the routed experts' size");
  }
  std::string dispatcher;
  RETURN_IF_ERROR(r.Choice("--moe-token-dispatcher-type", "allgather",
                           {"allgather", "alltoall", "flex"}, &dispatcher));
  if (s.ep > 1 && dispatcher != "alltoall") {
    return r.Invalid("--moe-token-dispatcher-type",
                     dispatcher +
                         (r.Has("--moe-token-dispatcher-type") ? "" : " (Megatron's default)") +
                         " is not modelled with expert parallelism; ppsim models the all-to-all "
                         "dispatcher: give --moe-token-dispatcher-type alltoall");
  }
  m->set_experts(static_cast<int32_t>(experts));
  m->set_experts_per_token(static_cast<int32_t>(topk));
  m->set_expert_ffn_hidden(ffn);
  m->set_shared_experts(static_cast<int32_t>(shared / ffn));
  m->set_first_dense_layers(static_cast<int32_t>(dense));
  m->set_router_bias(r.Has("--moe-router-enable-expert-bias"));
  return Status();
}

// The layer family (GELU or SwiGLU), its norm and position embeddings, with notes where the
// arguments differ from what ppsim's layer of that family counts.
Status Family(const MegatronReader& r, proto::TransformerModel* m, MegatronRun* run) {
  const bool swiglu = r.Has("--swiglu");
  m->set_mlp(swiglu ? proto::TransformerModel::SWIGLU : proto::TransformerModel::GELU);
  std::string norm, position;
  RETURN_IF_ERROR(r.Choice("--normalization", "LayerNorm", {"LayerNorm", "RMSNorm"}, &norm));
  m->set_norm(norm == "RMSNorm" ? proto::TransformerModel::RMSNORM
                                : proto::TransformerModel::LAYERNORM);
  m->set_tied_embeddings(!r.Has("--untie-embeddings-and-output-weights"));
  RETURN_IF_ERROR(r.Choice("--position-embedding-type", "learned_absolute",
                           {"learned_absolute", "rope", "yarn", "mrope", "relative", "none"},
                           &position));
  if (r.Has("--no-position-embedding") && position != "rope") {
    return r.Invalid("--no-position-embedding",
                     "is deprecated; Megatron refuses it unless "
                     "--position-embedding-type rope");
  }
  const bool learned = position == "learned_absolute";
  if (learned == swiglu) {
    run->notes.push_back("--position-embedding-type " + position + ": ppsim's " +
                         (swiglu ? "SwiGLU layer counts no learned positions"
                                 : "GELU layer counts learned positions (max positions x h)"));
  }
  const bool biases = !r.Has("--disable-bias-linear");
  if (biases == swiglu) {
    run->notes.push_back(swiglu ? "linear-layer biases (no --disable-bias-linear) not counted: "
                                  "ppsim's SwiGLU layer has none"
                                : "--disable-bias-linear: ppsim's GELU layer counts its biases");
  }
  return Status();
}

// The model checks' messages ("--megatron: vocab: ...", one per line) name the model field; the
// user wrote a Megatron argument: "--megatron: --vocab-size (model vocab): ...".
Status NameModelFlags(const Status& status, const std::string& where) {
  static constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
      {"layers", "--num-layers"},
      {"hidden", "--hidden-size"},
      {"ffn_hidden", "--ffn-hidden-size"},
      {"heads", "--num-attention-heads"},
      {"kv_heads", "--num-query-groups"},
      {"vocab", "--vocab-size"},
      {"seq_len", "--max-position-embeddings"},
      {"head_dim", "--kv-channels"},
      {"q_lora_rank", "--q-lora-rank"},
      {"kv_lora_rank", "--kv-lora-rank"},
      {"qk_nope_head_dim", "--qk-head-dim"},
      {"qk_rope_head_dim", "--qk-pos-emb-head-dim"},
      {"v_head_dim", "--v-head-dim"},
      {"experts", "--num-experts"},
      {"experts_per_token", "--moe-router-topk"},
      {"expert_ffn_hidden", "--moe-ffn-hidden-size"},
      {"shared_experts", "--moe-shared-expert-intermediate-size"},
      {"first_dense_layers", "--moe-layer-freq"}};
  std::string out;
  const std::string& message = status.message();
  for (size_t start = 0; start < message.size();) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    std::string line = message.substr(start, end - start);
    for (const auto& [field, flag] : kFlags) {
      const std::string prefix = where + ": " + std::string(field) + ": ";
      if (line.starts_with(prefix)) {
        line = where + ": " + std::string(flag) + " (model " + std::string(field) +
               "): " + line.substr(prefix.size());
        break;
      }
    }
    out += (out.empty() ? "" : "\n") + line;
    start = end + 1;
  }
  return Status::InvalidInput(out);
}

Status Model(const MegatronReader& r, const Shape& s, MegatronRun* run) {
  proto::TransformerModel m;
  int64_t hidden = 0, seq = 0, positions = 0, ffn = 0, vocab = 0;
  RETURN_IF_ERROR(r.Required("--hidden-size", &hidden));
  RETURN_IF_ERROR(r.Required("--seq-length", &seq));
  RETURN_IF_ERROR(r.Whole("--max-position-embeddings", seq, 1, &positions));
  m.set_layers(static_cast<int32_t>(s.layers));
  m.set_hidden(hidden);
  RETURN_IF_ERROR(Family(r, &m, run));
  // Megatron's default FFN (arguments.py): 4h, or for SwiGLU int((4h x 2/3) / 64) x 64.
  const int64_t fallback = r.Has("--swiglu") ? (4 * hidden * 2 / 3) / 64 * 64 : 4 * hidden;
  RETURN_IF_ERROR(r.Whole("--ffn-hidden-size", fallback, 1, &ffn));
  m.set_ffn_hidden(ffn);
  RETURN_IF_ERROR(Attention(r, s, hidden, &m, run));
  RETURN_IF_ERROR(Vocabulary(r, s, run, &vocab));
  m.set_vocab(vocab);
  // The model's own length is its positions (GPT's learned table); the run's is --seq-length.
  m.set_seq_len(positions);
  Set(run, "seq_len", std::to_string(seq), "--seq-length");
  RETURN_IF_ERROR(Experts(r, s, &m));
  int64_t mtp = 0;
  RETURN_IF_ERROR(r.Whole("--mtp-num-layers", 0, 0, &mtp));
  m.set_mtp_layers(static_cast<int32_t>(mtp));
  ConfigLocations locations;
  locations.set_source(r.where());
  const Status status = TransformerFromProto(m, locations, &run->model);
  return status.ok() ? status : NameModelFlags(status, r.where());
}

}  // namespace

namespace {

Status Precision(const MegatronReader& r, MegatronRun* run) {
  if (r.Has("--bf16") && r.Has("--fp16")) {
    return r.Invalid("--fp16", "give --bf16 or --fp16, not both (Megatron asserts it)");
  }
  if (!r.Has("--bf16") && !r.Has("--fp16")) {
    return r.Invalid("--bf16",
                     "missing: without --bf16 or --fp16 Megatron trains in fp32, which "
                     "ppsim does not model; give --bf16 or --fp16");
  }
  std::string dtype = r.Has("--fp16") ? "fp16" : "bf16";
  std::string_view from = r.Has("--fp16") ? "--fp16" : "--bf16";
  if (r.Has("--fp8-format")) {
    std::string format;
    RETURN_IF_ERROR(r.Choice("--fp8-format", "", {"e4m3", "hybrid"}, &format));
    dtype = "fp8";
    from = "--fp8-format";
    // Blackwell's MXFP8 recipe keeps a scale byte per 32 values (models/transformer.h).
    std::string recipe;
    if (r.Has("--fp8-recipe")) {
      RETURN_IF_ERROR(r.Choice("--fp8-recipe", "",
                               {"tensorwise", "delayed", "mxfp8", "blockwise", "custom"}, &recipe));
    }
    if (recipe == "mxfp8") dtype = "mxfp8";
  }
  Set(run, "dtype", dtype, from);
  const bool bf16_grads =
      r.Has("--grad-reduce-in-bf16") && !r.Has("--accumulate-allreduce-grads-in-fp32");
  if (r.Has("--grad-reduce-in-bf16")) {
    Set(run, "grad_dtype", bf16_grads ? "bf16" : "fp32", "--grad-reduce-in-bf16");
  }
  run->grad_bytes_per_param = bf16_grads ? 2 : 4;
  return Status();
}

// Fine-grained activation offloading: Megatron's module names are ppsim's (checked against the
// model with the run). Megatron reads --offload-modules only with the switch, and asserts a
// non-empty list with it.
Status Offloading(const MegatronReader& r, MegatronRun* run) {
  const bool on = r.Has("--fine-grained-activation-offloading");
  if (!r.Has("--offload-modules")) {
    if (on) {
      return r.Invalid("--fine-grained-activation-offloading",
                       "needs --offload-modules, as Megatron asserts (valid: attn_norm, "
                       "qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1, moe_act)");
    }
    return Status();
  }
  if (!on) {
    run->notes.push_back(
        "--offload-modules: no effect without --fine-grained-activation-offloading");
    return Status();
  }
  std::string modules;
  for (const std::string& module : r.Values("--offload-modules")) {
    modules += (modules.empty() ? "" : ",") + module;
  }
  Set(run, "offload_modules", modules, "--offload-modules");
  return Status();
}

// Recomputation: ppsim's selective is Megatron's core_attn; full is every layer recomputed.
Status Recomputation(const MegatronReader& r, const Shape& s, MegatronRun* run) {
  std::string granularity = "none";
  const bool activations = r.Has("--recompute-activations");
  if (r.Has("--recompute-granularity")) {
    RETURN_IF_ERROR(r.Choice("--recompute-granularity", "", {"full", "selective"}, &granularity));
  }
  if (activations) granularity = "selective";  // arguments.py: --recompute-activations wins
  std::string_view from = activations ? "--recompute-activations" : "--recompute-granularity";
  if (granularity == "none") {
    for (std::string_view flag :
         {"--recompute-method", "--recompute-num-layers", "--recompute-modules"}) {
      if (r.Has(flag)) return r.Invalid(flag, "needs --recompute-granularity");
    }
    return Status();
  }
  if (granularity == "selective") {
    for (std::string_view flag : {"--recompute-method", "--recompute-num-layers"}) {
      if (r.Has(flag)) {
        return r.Invalid(flag, "applies to full recomputation only, as Megatron asserts");
      }
    }
    if (r.Has("--recompute-modules")) {
      // Megatron's names are ppsim's (checked against the model with the run).
      std::string modules;
      for (const std::string& module : r.Values("--recompute-modules")) {
        modules += (modules.empty() ? "" : ",") + module;
      }
      Set(run, "recompute_modules", modules, "--recompute-modules");
    }
    Set(run, "recompute", "selective", from);
    return Status();
  }
  std::string method;
  int64_t count = 0;
  // TransformerConfig requires both with full granularity.
  if (!r.Has("--recompute-method")) {
    return r.Invalid(
        "--recompute-method",
        "missing; Megatron requires uniform or block with --recompute-granularity full");
  }
  RETURN_IF_ERROR(r.Choice("--recompute-method", "", {"uniform", "block"}, &method));
  if (!r.Has("--recompute-num-layers")) {
    return r.Invalid("--recompute-num-layers",
                     "missing; Megatron requires it with "
                     "--recompute-granularity full");
  }
  RETURN_IF_ERROR(r.Whole("--recompute-num-layers", 1, 1, &count));
  // uniform 1 is ppsim's default full recompute (a checkpoint per layer); block with N at least
  // the layers of every stage recomputes them all.
  if (!(method == "uniform" && count == 1) && !(method == "block" && count >= s.max_stage_layers)) {
    Set(run, "recompute_method", method, "--recompute-method");
    Set(run, "recompute_num_layers", std::to_string(count), "--recompute-num-layers");
  }
  Set(run, "recompute", "full", from);
  return Status();
}

Status Training(const MegatronReader& r, const Shape& s, MegatronRun* run) {
  int64_t mbs = 0, gbs = 0;
  RETURN_IF_ERROR(r.Whole("--micro-batch-size", 1, 1, &mbs));
  Set(run, "microbatch_size", std::to_string(mbs), "--micro-batch-size");
  if (r.Has("--global-batch-size")) {
    RETURN_IF_ERROR(r.Whole("--global-batch-size", 0, 1, &gbs));
    Set(run, "global_batch", std::to_string(gbs), "--global-batch-size");
  } else {
    Set(run, "microbatches", "1", "--global-batch-size");
    run->notes.push_back("no --global-batch-size: Megatron's default, mbs x dp (one microbatch)");
  }
  RETURN_IF_ERROR(Precision(r, run));
  RETURN_IF_ERROR(Recomputation(r, s, run));
  RETURN_IF_ERROR(Offloading(r, run));
  std::string backend;
  RETURN_IF_ERROR(r.Choice("--attention-backend", "auto",
                           {"auto", "flash", "fused", "unfused", "local"}, &backend));
  if (backend == "unfused" || backend == "local") {
    Set(run, "flash_attention", "off", "--attention-backend");
  }
  run->overlap_grad_reduce = r.Has("--overlap-grad-reduce");
  RETURN_IF_ERROR(r.Whole("--ddp-bucket-size", 0, 1, &run->bucket_params));
  if (r.Has("--ddp-bucket-size") && !run->overlap_grad_reduce) {
    return r.Invalid("--ddp-bucket-size",
                     "buckets the overlapped gradient reduction; give "
                     "--overlap-grad-reduce too");
  }
  return Status();
}

}  // namespace

Status ReadMegatronArgs(std::string_view text, const std::string& where, MegatronRun* run,
                        const MegatronDegrees& degrees) {
  *run = MegatronRun();
  std::string file;
  std::string contents;
  if (text.starts_with('@')) {
    file = std::string(text.substr(1));
    if (file.empty()) {
      return Status::InvalidInput(where + ": '@' names no file; give @FILE or the arguments");
    }
    RETURN_IF_ERROR(ReadFile(file, &contents, int64_t{1} << 20, "Megatron-LM argument"));
    text = contents;
  }
  std::vector<std::string> words;
  if (Status split = SplitShellWords(text, &words); !split.ok()) {
    return Status::InvalidInput((file.empty() ? where : file) + ": " + split.message());
  }
  if (words.empty()) {
    return Status::InvalidInput((file.empty() ? where : file) +
                                ": no arguments; give Megatron-LM's pretrain_gpt.py arguments");
  }
  Args args;
  RETURN_IF_ERROR(CollectArgs(words, WordPlaces(text, words, file, where), &args));
  const MegatronReader reader(std::move(args), where);
  // A refused argument first: no other message would help while it stays.
  for (const auto& [flag, given] : reader.args()) {
    const MegatronArgument* row = FindMegatronArgument(flag);
    if (row->use == MegatronUse::kRefused) {
      return reader.Invalid(flag,
                            "changes performance and is not modelled: " + std::string(row->why));
    }
  }
  Shape shape;
  RETURN_IF_ERROR(Parallel(reader, degrees, &shape, run));
  RETURN_IF_ERROR(Model(reader, shape, run));
  RETURN_IF_ERROR(Training(reader, shape, run));
  run->model.name = file.empty() ? "megatron" : "megatron @" + file;
  // What was ignored, in one sentence, after the assumptions.
  std::string ignored;
  for (const auto& [flag, given] : reader.args()) {
    if (FindMegatronArgument(flag)->use == MegatronUse::kIgnored) {
      ignored += (ignored.empty() ? "" : ", ") + flag;
    }
  }
  for (const auto& [flag, given] : reader.args()) {
    const MegatronArgument* row = FindMegatronArgument(flag);
    if (row->use == MegatronUse::kAssumed)
      run->notes.push_back(flag + ": " + std::string(row->why));
  }
  if (!ignored.empty()) {
    run->notes.push_back("ignored (no effect on an iteration's time or memory): " + ignored);
  }
  return Status();
}

}  // namespace ppsim
