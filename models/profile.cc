#include "models/profile.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/files.h"
#include "base/names.h"
#include "config/units.h"

namespace ppsim {
namespace {

enum class Quantity { kTime, kSize };

// A profile field: its name in CSV headers and proto messages and where it goes.
struct Field {
  std::string_view csv_name;
  Quantity quantity;
  std::vector<double> CostValues::*seconds;
  std::vector<int64_t> CostValues::*bytes;
};

const std::vector<Field>& Fields() {
  static const std::vector<Field> kFields = {
      {"f", Quantity::kTime, &CostValues::forward_s, nullptr},
      {"i", Quantity::kTime, &CostValues::backward_input_s, nullptr},
      {"w", Quantity::kTime, &CostValues::backward_weight_s, nullptr},
      {"b", Quantity::kTime, &CostValues::backward_s, nullptr},
      {"overlap", Quantity::kTime, &CostValues::overlap_s, nullptr},
      {"activation", Quantity::kSize, nullptr, &CostValues::activation_bytes},
      {"activation_w", Quantity::kSize, nullptr, &CostValues::activation_w_bytes},
      {"message", Quantity::kSize, nullptr, &CostValues::message_bytes},
      {"params", Quantity::kSize, nullptr, &CostValues::param_bytes},
      {"grads", Quantity::kSize, nullptr, &CostValues::gradient_bytes},
      {"optimizer", Quantity::kSize, nullptr, &CostValues::optimizer_state_bytes},
      {"optimizer_step", Quantity::kTime, &CostValues::optimizer_step_s, nullptr},
  };
  return kFields;
}

constexpr std::string_view kTimeUnits[] = {"ns", "us", "ms", "s"};
constexpr std::string_view kSizeUnits[] = {"B",  "bytes", "KB",  "MB",  "GB",
                                           "TB", "KiB",   "MiB", "GiB", "TiB"};

// Every column name ParseColumn accepts, for "did you mean".
std::vector<std::string> ColumnNames() {
  std::vector<std::string> names = {"stage"};
  for (const Field& f : Fields()) {
    auto add = [&](std::string_view unit) {
      names.push_back(std::string(f.csv_name) + "_" + std::string(unit));
    };
    if (f.quantity == Quantity::kTime) {
      for (std::string_view u : kTimeUnits) add(u);
    } else {
      for (std::string_view u : kSizeUnits) add(u);
    }
  }
  return names;
}

std::string ValidColumns() {
  return "stage, or f, i, w, b, overlap with _ns, _us, _ms or _s, or activation, activation_w, "
         "message, params, grads, optimizer with _B, _bytes, _KB, _MB, _GB, _TB, _KiB, _MiB, _GiB "
         "or _TiB";
}

std::string Where(const std::string& source, size_t line, size_t column) {
  return source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

// Splits a CSV line at commas; records each cell's 1-based column.
void SplitCells(std::string_view line, std::vector<std::string>* cells,
                std::vector<size_t>* columns) {
  size_t start = 0;
  while (true) {
    size_t end = line.find(',', start);
    if (end == std::string_view::npos) end = line.size();
    size_t b = start;
    size_t e = end;
    while (b < e && (line[b] == ' ' || line[b] == '\t')) ++b;
    while (e > b && (line[e - 1] == ' ' || line[e - 1] == '\t' || line[e - 1] == '\r')) --e;
    cells->emplace_back(line.substr(b, e - b));
    columns->push_back(b + 1);
    if (end == line.size()) break;
    start = end + 1;
  }
}

// A column: the field it fills (null for `stage`) and its unit.
struct Column {
  const Field* field = nullptr;
  std::string unit;
};

bool ParseColumn(const std::string& header, Column* column) {
  if (header == "stage") return true;
  for (const Field& f : Fields()) {
    const std::string prefix = std::string(f.csv_name) + "_";
    if (header.rfind(prefix, 0) != 0) continue;
    const std::string unit = header.substr(prefix.size());
    bool known = false;
    if (f.quantity == Quantity::kTime) {
      for (std::string_view u : kTimeUnits) known |= u == unit;
    } else {
      for (std::string_view u : kSizeUnits) known |= u == unit;
    }
    // "activation_w_MiB" also starts with "activation_": let the longer name claim it.
    if (!known) continue;
    column->field = &f;
    column->unit = unit == "bytes" ? "B" : unit;
    return true;
  }
  return false;
}

}  // namespace

Status ParseProfileCsv(std::string_view text, const std::string& source, Profile* profile) {
  *profile = Profile();
  profile->source = source;
  std::vector<Column> columns;
  bool have_header = false;
  size_t line_number = 0;
  size_t start = 0;
  std::string errors;
  auto error = [&](size_t line, size_t column, const std::string& what) {
    errors += (errors.empty() ? "" : "\n") + Where(source, line, column) + what;
  };
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::vector<size_t> cell_columns;
    SplitCells(line, &cells, &cell_columns);
    if (!have_header) {
      have_header = true;
      for (size_t c = 0; c < cells.size(); ++c) {
        Column column;
        if (!ParseColumn(cells[c], &column)) {
          const std::string best = ClosestName(cells[c], ColumnNames());
          error(line_number, cell_columns[c],
                "unknown column '" + cells[c] + "'; valid: " + ValidColumns() +
                    (best.empty() ? "" : " (did you mean " + best + "?)"));
        }
        for (size_t k = 0; k < columns.size(); ++k) {
          if (column.field != nullptr && columns[k].field == column.field) {
            error(line_number, cell_columns[c],
                  "column '" + cells[c] + "' repeats " + std::string(column.field->csv_name) +
                      "; give each quantity once");
          }
        }
        columns.push_back(column);
      }
      if (!errors.empty()) break;  // The rows cannot be read without their columns.
      continue;
    }
    if (cells.size() != columns.size()) {
      error(line_number, 1,
            std::to_string(cells.size()) + " cells for " + std::to_string(columns.size()) +
                " columns; every row has one value per column");
      continue;
    }
    const int32_t row = profile->num_rows++;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (cells[c].empty()) {
        error(line_number, cell_columns[c], "empty cell; every row needs a value in every column");
        continue;
      }
      if (columns[c].field == nullptr) {  // stage
        if (cells[c] != std::to_string(row)) {
          error(line_number, cell_columns[c],
                "stage '" + cells[c] + "'; rows must be stages 0, 1, 2, ... in order (expected " +
                    std::to_string(row) + ")");
        }
        continue;
      }
      const Field& f = *columns[c].field;
      const std::string value_with_unit = cells[c] + columns[c].unit;
      const std::string what = Where(source, line_number, cell_columns[c]).substr(0) +
                               std::string(f.csv_name) + "_" + columns[c].unit;
      // The unit parsers produce "<what>: ..." messages; ours are located at the cell.
      Status status;
      if (f.quantity == Quantity::kTime) {
        double seconds = 0;
        status = ParseDuration(what, value_with_unit, &seconds);
        if (status.ok()) (profile->values.*f.seconds).push_back(seconds);
      } else {
        int64_t bytes = 0;
        status = ParseSize(what, value_with_unit, &bytes);
        if (status.ok()) (profile->values.*f.bytes).push_back(bytes);
      }
      if (!status.ok()) errors += (errors.empty() ? "" : "\n") + status.message();
    }
  }
  if (!have_header) errors = source + ": empty profile; expected a header row and stage rows";
  if (errors.empty() && profile->num_rows == 0) {
    errors = source + ": no stage rows after the header";
  }
  if (!errors.empty()) return Status::InvalidInput(errors);
  return Status();
}

Status ProfileFromProto(const proto::Profile& message, const ConfigLocations& locations,
                        Profile* profile) {
  const std::string source = profile->source;
  *profile = Profile();
  profile->source = source;
  profile->num_rows = message.stages_size();
  if (profile->num_rows == 0) {
    return Status::InvalidInput(locations.Where("stages") +
                                ": stages: none; give one entry per virtual stage or one for all");
  }
  struct ProtoField {
    std::string_view name;
    std::string_view text_name;  // the same quantity as text with a unit
    const std::string& (proto::StageProfile::*text)() const;
    bool (proto::StageProfile::*has)() const;
    double (proto::StageProfile::*seconds)() const;
    int64_t (proto::StageProfile::*bytes)() const;
    std::vector<double> CostValues::*seconds_out;
    std::vector<int64_t> CostValues::*bytes_out;
  };
  using SP = proto::StageProfile;
  const ProtoField fields[] = {
      {"f_s", "f", &SP::f, &SP::has_f_s, &SP::f_s, nullptr, &CostValues::forward_s, nullptr},
      {"i_s", "i", &SP::i, &SP::has_i_s, &SP::i_s, nullptr, &CostValues::backward_input_s, nullptr},
      {"w_s", "w", &SP::w, &SP::has_w_s, &SP::w_s, nullptr, &CostValues::backward_weight_s,
       nullptr},
      {"b_s", "b", &SP::b, &SP::has_b_s, &SP::b_s, nullptr, &CostValues::backward_s, nullptr},
      {"overlap_s", "overlap", &SP::overlap, &SP::has_overlap_s, &SP::overlap_s, nullptr,
       &CostValues::overlap_s, nullptr},
      {"activation_bytes", "activation", &SP::activation, &SP::has_activation_bytes, nullptr,
       &SP::activation_bytes, nullptr, &CostValues::activation_bytes},
      {"activation_w_bytes", "activation_w", &SP::activation_w, &SP::has_activation_w_bytes,
       nullptr, &SP::activation_w_bytes, nullptr, &CostValues::activation_w_bytes},
      {"message_bytes", "message", &SP::message, &SP::has_message_bytes, nullptr,
       &SP::message_bytes, nullptr, &CostValues::message_bytes},
      {"param_bytes", "params", &SP::params, &SP::has_param_bytes, nullptr, &SP::param_bytes,
       nullptr, &CostValues::param_bytes},
      {"grad_bytes", "grads", &SP::grads, &SP::has_grad_bytes, nullptr, &SP::grad_bytes, nullptr,
       &CostValues::gradient_bytes},
      {"optimizer_bytes", "optimizer", &SP::optimizer, &SP::has_optimizer_bytes, nullptr,
       &SP::optimizer_bytes, nullptr, &CostValues::optimizer_state_bytes},
      {"optimizer_step_s", "optimizer_step", &SP::optimizer_step, &SP::has_optimizer_step_s,
       &SP::optimizer_step_s, nullptr, &CostValues::optimizer_step_s, nullptr},
  };
  std::string errors;
  auto error = [&](const std::string& path, const std::string& what) {
    errors += (errors.empty() ? "" : "\n") + locations.Where(path) + ": " + path + ": " + what;
  };
  for (const ProtoField& f : fields) {
    int given = 0;
    auto has = [&](const SP& stage) { return (stage.*f.has)() || !(stage.*f.text)().empty(); };
    for (const SP& stage : message.stages()) given += has(stage) ? 1 : 0;
    if (given == 0) continue;
    for (int k = 0; k < message.stages_size(); ++k) {
      const SP& stage = message.stages(k);
      const std::string path = "stages[" + std::to_string(k) + "]." + std::string(f.name);
      if (!has(stage)) {
        error("stages[" + std::to_string(k) + "]",
              "no " + std::string(f.name) +
                  ", but other stages give it; give it for every stage "
                  "or none");
        continue;
      }
      if (!(stage.*f.text)().empty()) {
        const std::string text_path =
            "stages[" + std::to_string(k) + "]." + std::string(f.text_name);
        if ((stage.*f.has)()) {
          error(text_path, "given with " + std::string(f.name) + "; give the quantity once");
          continue;
        }
        // The unit parsers' messages start with their `what`: located here as the others.
        const std::string what = locations.Where(text_path) + ": " + text_path;
        Status status;
        if (f.seconds != nullptr) {
          double v = 0;
          status = ParseDuration(what, (stage.*f.text)(), &v);
          (profile->values.*f.seconds_out).push_back(v);
        } else {
          int64_t v = 0;
          status = ParseSize(what, (stage.*f.text)(), &v);
          (profile->values.*f.bytes_out).push_back(v);
        }
        if (!status.ok()) errors += (errors.empty() ? "" : "\n") + status.message();
        continue;
      }
      if (f.seconds != nullptr) {
        const double v = (stage.*f.seconds)();
        if (!(v >= 0) || !std::isfinite(v)) {
          char text[32];
          std::snprintf(text, sizeof(text), "%g", v);
          error(path, std::string(text) + " is negative or not finite; times are >= 0 seconds");
        }
        (profile->values.*f.seconds_out).push_back(v);
      } else {
        const int64_t v = (stage.*f.bytes)();
        if (v < 0) error(path, std::to_string(v) + " is negative; sizes are >= 0 bytes");
        (profile->values.*f.bytes_out).push_back(v);
      }
    }
  }
  if (!errors.empty()) return Status::InvalidInput(errors);
  return Status();
}

Status ReadProfile(const std::string& path, Profile* profile) {
  if (path.ends_with(".csv")) {
    std::string text;
    RETURN_IF_ERROR(ReadFile(path, &text, kMaxConfigBytes, "profile"));
    return ParseProfileCsv(text, path, profile);
  }
  proto::Profile message;
  ConfigLocations locations;
  RETURN_IF_ERROR(ReadConfigFile(path, &message, &locations));
  profile->source = path;
  return ProfileFromProto(message, locations, profile);
}

}  // namespace ppsim
