#include "report/report_about.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "base/csv.h"
#include "base/files.h"
#include "base/json.h"
#include "batch/results.h"

namespace ppsim {
namespace {

constexpr const char* kAboutFields[] = {"ppsim_version", "command", "experiment",
                                        "experiment_file", "baseline"};

// Each field's distinct values in order of first appearance.
class Values {
 public:
  void Add(const std::string& field, const std::string& value) {
    if (value.empty()) return;
    std::vector<std::string>& list = values_[field];
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
  }
  bool Has(const std::string& field) const { return values_.count(field) > 0; }
  // "4", "4, 8"; "" when the field has none.
  std::string Joined(const std::string& field) const {
    const auto it = values_.find(field);
    if (it == values_.end()) return "";
    std::string out;
    for (const std::string& v : it->second) out += (out.empty() ? "" : ", ") + v;
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// model, cluster and parallelism from the fields' values.
std::vector<std::pair<std::string, std::string>> Simulated(const Values& v) {
  std::vector<std::pair<std::string, std::string>> out;
  if (v.Has("model")) out.push_back({"model", v.Joined("model")});
  std::string cluster = v.Joined("platform");
  if (v.Has("gpus")) cluster += (cluster.empty() ? "" : ", ") + v.Joined("gpus") + " GPUs";
  if (!cluster.empty()) out.push_back({"cluster", cluster});
  std::string parallelism;
  for (const char* field : {"pp", "tp", "dp", "cp", "ep"}) {
    if (!v.Has(field)) continue;
    parallelism += (parallelism.empty() ? "" : " \u00b7 ") + std::string(field) + " " +
                   v.Joined(field);
  }
  if (!parallelism.empty()) out.push_back({"parallelism", parallelism});
  return out;
}

std::string Text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  return "";
}

}  // namespace

std::string AboutPath(const std::string& csv_path) {
  if (csv_path.size() > 4 && csv_path.ends_with(".csv")) {
    return csv_path.substr(0, csv_path.size() - 4) + ".about.json";
  }
  return csv_path + ".about.json";
}

std::string AboutJson(const ReportAbout& about) {
  nlohmann::ordered_json j;
  j["ppsim_version"] = about.ppsim_version;
  j["command"] = about.command;
  j["experiment"] = about.experiment;
  j["experiment_file"] = about.experiment_file;
  if (!about.baseline.empty()) j["baseline"] = about.baseline;
  return FormatJsonPretty(j) + "\n";
}

Status ReadAboutJson(std::string_view text, const std::string& source, ReportAbout* about) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  bool valid = j.is_object();
  for (const char* field : kAboutFields) {
    valid = valid && (!j.contains(field) || j[field].is_string());
  }
  if (!valid) {
    return Status::InvalidInput(
        source +
        ": not a JSON object of strings; an about file is {\"ppsim_version\": ..., "
        "\"command\": ..., \"experiment\": ..., \"experiment_file\": ...}");
  }
  auto get = [&](const char* field) { return j.contains(field) ? Text(j[field]) : ""; };
  about->ppsim_version = get("ppsim_version");
  about->command = get("command");
  about->experiment = get("experiment");
  about->experiment_file = get("experiment_file");
  about->baseline = get("baseline");
  return Status();
}

Status ReadAboutFile(const std::string& path, ReportAbout* about) {
  std::string json;
  RETURN_IF_ERROR(ReadFile(path, &json, int64_t{1} << 20, "about"));
  return ReadAboutJson(json, path, about);
}

void SimulatedFromJsonLines(std::string_view text, ReportAbout* about) {
  std::vector<std::string> axes;
  std::vector<ResultJsonRow> rows;
  std::vector<std::string> dropped;
  if (!ReadResultsJsonLines(text, "", &axes, &rows, &dropped).ok()) return;
  Values values;
  for (const ResultJsonRow& row : rows) {
    if (row.status != PointStatus::kOk) continue;
    const nlohmann::json j = nlohmann::json::parse(row.text, nullptr, false);
    if (!j.is_object() || !j.contains("result") || !j["result"].is_object()) continue;
    const nlohmann::json& result = j["result"];
    for (const char* field : {"model", "platform", "gpus", "pp", "tp", "dp", "cp", "ep"}) {
      if (result.contains(field)) values.Add(field, Text(result[field]));
    }
  }
  about->simulated = Simulated(values);
}

void SimulatedFromRunCsv(std::string_view text, ReportAbout* about) {
  std::vector<CsvRecord> records;
  if (!ReadCsv(text, "", &records).ok() || records.empty()) return;
  const std::vector<std::string>& header = records[0].fields;
  Values values;
  for (const char* field : {"model", "platform", "pp", "tp", "dp"}) {
    const auto at = std::find(header.begin(), header.end(), field);
    if (at == header.end()) continue;
    const size_t column = static_cast<size_t>(at - header.begin());
    for (size_t r = 1; r < records.size(); ++r) {
      if (column < records[r].fields.size()) values.Add(field, records[r].fields[column]);
    }
  }
  about->simulated = Simulated(values);
}

}  // namespace ppsim
