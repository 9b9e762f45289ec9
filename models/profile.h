// Measured per-stage costs from a file: `ppsim run --profile FILE`.
//
// CSV (.csv): a header naming the columns with their units, then one row per virtual stage (or one
// row for every stage):
//   stage,f_ms,i_ms,w_ms,activation_MiB,activation_w_MiB,message_MiB
//   0,1.2,1.1,0.9,1536,1152,32
// Columns: f, i, w, b, overlap, optimizer_step with a time unit (ns, us, ms, s); activation,
// activation_w, message, params, grads, optimizer with a size unit (B or bytes, KB, MB, GB, TB,
// KiB, MiB, GiB, TiB); an optional `stage` column must count 0, 1, 2, ... Every cell needs a value.
// Protobuf (models/profile.proto) from .textproto/.pbtxt/.txtpb, .json or .yaml/.yml: a list of
// `stages`, each with any of f_s, i_s, w_s, b_s, overlap_s, activation_bytes, activation_w_bytes,
// message_bytes, param_bytes, grad_bytes, optimizer_bytes, optimizer_step_s, or the same quantity
// as text with a unit under its CSV name (f: "3.2ms", activation: "1.5GiB"; one form per quantity
// and stage); a quantity given for one stage must be given for all.
#ifndef PPSIM_MODELS_PROFILE_H_
#define PPSIM_MODELS_PROFILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "config/config_file.h"
#include "models/profile.pb.h"
#include "models/stage_costs.h"

namespace ppsim {

// A profile as read: its values (models/stage_costs.h), each field with one entry per row, or none
// when the profile does not give it. The file's optimizer column (CSV `optimizer`, proto
// optimizer_bytes) is the optimizer state kept on each GPU.
struct Profile {
  std::string source;    // the file, for messages
  int32_t num_rows = 0;  // 1: the row applies to every virtual stage
  CostValues values;
};

// Reads a profile by the file's extension (.csv, or a configuration format of config_file.h).
Status ReadProfile(const std::string& path, Profile* profile);

// The two readers, for text already in memory; `source` names it in messages.
Status ParseProfileCsv(std::string_view text, const std::string& source, Profile* profile);
Status ProfileFromProto(const proto::Profile& message, const ConfigLocations& locations,
                        Profile* profile);

}  // namespace ppsim

#endif  // PPSIM_MODELS_PROFILE_H_
