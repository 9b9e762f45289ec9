#include "serve/api.h"

#include <unistd.h>

#include <google/protobuf/descriptor.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/escape.h"
#include "base/files.h"
#include "base/flag_locator.h"
#include "base/json.h"
#include "base/numbers.h"
#include "config/config_file.h"
#include "experiments/framework_emit.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run_command.h"
#include "experiments/run_output.h"
#include "models/transformer.h"
#include "platforms/cluster.h"
#include "schedules/registry.h"

namespace ppsim::serve {
namespace {

using Json = nlohmann::ordered_json;
using google::protobuf::FieldDescriptor;

constexpr std::string_view kUpload = "upload:";
constexpr size_t kMaxUploadName = 100;

// How a field that names a file may be given to the server.
enum class FileField { kNone, kOutput, kPresetOrUpload, kUpload, kMegatron };

FileField FileFieldOf(const FieldDescriptor& field) {
  const proto::Flag& flag = field.options().GetExtension(proto::flag);
  const std::string& value = flag.value_name();
  if (field.name() == "megatron") return FileField::kMegatron;
  if (value.find("FILE") == std::string::npos) return FileField::kNone;
  if (flag.group() == proto::Flag::OUTPUTS) return FileField::kOutput;
  return value.starts_with("NAME|") ? FileField::kPresetOrUpload : FileField::kUpload;
}

bool IsPreset(const std::string& field, const std::string& value) {
  if (field == "model") return FindTransformerPreset(value) != nullptr;
  if (field == "platform") return FindClusterPreset(value) != nullptr;
  return false;
}

bool ValidUploadName(std::string_view name) {
  if (name.empty() || name.size() > kMaxUploadName || name[0] == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// "upload:NAME" as the uploaded file's path; InvalidInput at `where` when it names none.
Status UploadPath(const std::string& where, std::string_view value, const ApiFolders& folders,
                  std::string* path) {
  const std::string_view name = value.substr(kUpload.size());
  if (!ValidUploadName(name) || folders.uploads.empty() ||
      ::access((folders.uploads + "/" + std::string(name)).c_str(), R_OK) != 0) {
    return Status::InvalidInput(where + ": no upload '" + Printable(name) +
                                "'; post the file to /api/upload first");
  }
  *path = folders.uploads + "/" + std::string(name);
  return Status();
}

// Checks one file-naming field and points an upload at its file.
Status CheckFileField(const FieldDescriptor& field, const Locator& where, const ApiFolders& folders,
                      proto::RunConfig* config) {
  const FileField kind = FileFieldOf(field);
  if (kind == FileField::kNone) return Status();
  const google::protobuf::Reflection& reflection = *config->GetReflection();
  if (!reflection.HasField(*config, &field)) return Status();
  const std::string value = reflection.GetString(*config, &field);
  const std::string& name = field.name();
  const std::string at = where.Where(name);
  std::string path;
  switch (kind) {
    case FileField::kOutput:
      return Status::InvalidInput(at + ": the server writes no files; POST /api/timeline draws "
                                       "the timeline, /api/command gives the launch");
    case FileField::kMegatron:
      if (!value.starts_with("@")) return Status();
      if (!value.substr(1).starts_with(kUpload)) {
        return Status::InvalidInput(at + ": the server reads no files; give the arguments, or "
                                         "@upload:NAME for a file posted to /api/upload");
      }
      RETURN_IF_ERROR(UploadPath(at, std::string_view(value).substr(1), folders, &path));
      reflection.SetString(config, &field, "@" + path);
      return Status();
    case FileField::kPresetOrUpload:
      if (IsPreset(name, value)) return Status();
      [[fallthrough]];
    default:
      if (!value.starts_with(kUpload)) {
        return Status::InvalidInput(
            at + ": the server reads no files; give " +
            (kind == FileField::kPresetOrUpload ? "a preset name or " : std::string()) +
            "upload:NAME for a file posted to /api/upload");
      }
      RETURN_IF_ERROR(UploadPath(at, value, folders, &path));
      reflection.SetString(config, &field, path);
      return Status();
  }
}

// A request body as read, every file field checked.
struct Body {
  proto::RunConfig given;   // as written (uploads as "upload:NAME")
  proto::RunConfig config;  // uploads pointed at their files
  ConfigLocations locations;
};

Status ReadBody(std::string_view text, const ApiFolders& folders, Body* body) {
  RETURN_IF_ERROR(ParseConfig(text, ConfigFormat::kJson, "request", &body->given,
                              &body->locations));
  body->config = body->given;
  const ConfigLocator where(body->given, body->locations);
  if (!body->config.format().empty() && body->config.format() != "json") {
    return where.Invalid("format", "the server answers JSON; leave format out");
  }
  const google::protobuf::Descriptor& d = *proto::RunConfig::descriptor();
  for (int k = 0; k < d.field_count(); ++k) {
    RETURN_IF_ERROR(CheckFileField(*d.field(k), where, folders, &body->config));
  }
  body->config.set_format("json");
  return Status();
}

// A request body read, then resolved into the run request it gives, as `ppsim run` resolves it.
Status ReadRequest(std::string_view text, const ApiFolders& folders, Body* body,
                   RunRequest* request) {
  RETURN_IF_ERROR(ReadBody(text, folders, body));
  return ResolveRun(body->config, std::make_shared<ConfigLocator>(body->given, body->locations),
                    {}, request);
}

// Bad input 400; a run that cannot execute (a deadlock) 422; anything else 500.
ApiResponse Failure(const Status& status) {
  const int code = status.code() == StatusCode::kInvalidInput ? 400
                   : status.code() == StatusCode::kDeadlock   ? 422
                                                              : 500;
  return ErrorResponse(code, status.message());
}

// The body as the command line that runs it: uploads as the names they were posted under.
std::string CommandOf(const Body& body) {
  proto::RunConfig config = body.given;
  config.clear_format();
  const google::protobuf::Reflection& reflection = *config.GetReflection();
  const google::protobuf::Descriptor& d = *proto::RunConfig::descriptor();
  for (int k = 0; k < d.field_count(); ++k) {
    const FieldDescriptor& field = *d.field(k);
    if (FileFieldOf(field) == FileField::kNone || !reflection.HasField(config, &field)) continue;
    std::string value = reflection.GetString(config, &field);
    const size_t at = value.find(kUpload);
    if (at == 0 || (at == 1 && value[0] == '@')) value.erase(at, kUpload.size());
    reflection.SetString(&config, &field, value);
  }
  return RunCommandLine(config, FlagLocator());
}

Json FieldJson(const FieldDescriptor& field) {
  const proto::Flag& flag = field.options().GetExtension(proto::flag);
  Json f;
  f["field"] = field.name();
  f["flag"] = FlagLocator().Name(field.name());
  f["group"] = proto::Flag::Group_Name(flag.group());
  f["value_name"] = flag.value_name();
  f["help"] = flag.help();
  const char* type = field.is_repeated()                              ? "list"
                     : field.cpp_type() == FieldDescriptor::CPPTYPE_BOOL ? "switch"
                     : field.cpp_type() == FieldDescriptor::CPPTYPE_STRING ? "text"
                                                                           : "number";
  f["type"] = type;
  const FileField file = FileFieldOf(field);
  f["file"] = file == FileField::kUpload || file == FileField::kPresetOrUpload ||
              file == FileField::kMegatron;
  f["output"] = file == FileField::kOutput;
  return f;
}

}  // namespace

ApiResponse ErrorResponse(int status, std::string_view message) {
  Json error;
  error["error"] = std::string(message);
  return {status, "application/json", FormatJsonPretty(error)};
}

ApiResponse RunApi(std::string_view text, const ApiFolders& folders) {
  Body body;
  RunRequest request;
  Status status = ReadRequest(text, folders, &body, &request);
  std::vector<RunResult> results;
  if (status.ok()) status = ExecuteRequest(request, CommandOf(body), &results);
  if (!status.ok()) return Failure(status);
  return {200, "application/json", FormatResults(results, OutputFormat::kJson)};
}

ApiResponse TimelineApi(std::string_view text, const ApiFolders& folders) {
  Body body;
  RunRequest request;
  Status status = ReadRequest(text, folders, &body, &request);
  if (!status.ok()) return Failure(status);
  request.runs.resize(1);
  request.outputs.timeline_path =
      folders.scratch + "/timeline-" + std::to_string(::getpid()) + ".html";
  std::vector<RunResult> results;
  status = ExecuteRequest(request, CommandOf(body), &results);
  std::string html;
  if (status.ok()) status = ReadFile(request.outputs.timeline_path, &html);
  ::unlink(request.outputs.timeline_path.c_str());
  if (!status.ok()) return Failure(status);
  return {200, "text/html; charset=utf-8", html};
}

ApiResponse CommandApi(std::string_view text, const ApiFolders& folders) {
  Body body;
  RunRequest request;
  Status status = ReadRequest(text, folders, &body, &request);
  PreparedRun run;
  if (status.ok()) status = PrepareRun(request.runs[0], &run, /*compile=*/false);
  if (!status.ok()) return Failure(status);
  Json answer;
  answer["ppsim"] = CommandOf(body);
  for (Framework framework : {Framework::kMegatron, Framework::kTorchtitan}) {
    FrameworkLaunch launch;
    const Status emitted = EmitLaunch(run, framework, "schedule.csv", &launch);
    Json& out = answer[std::string(FrameworkName(framework))];
    if (!emitted.ok()) {
      out["error"] = emitted.message();
      continue;
    }
    const std::string file = framework == Framework::kMegatron ? "args.txt" : "job.toml";
    out = LaunchJson(launch, ImportCommand(launch, file, FlagLocator()), "");
  }
  return {200, "application/json", FormatJsonPretty(answer)};
}

std::string FieldsJson() {
  Json answer;
  Json& fields = answer["fields"];
  fields = Json::array();
  const google::protobuf::Descriptor& d = *proto::RunConfig::descriptor();
  for (int k = 0; k < d.field_count(); ++k) {
    const FieldDescriptor& field = *d.field(k);
    if (!field.options().HasExtension(proto::flag)) continue;
    fields.push_back(FieldJson(field));
  }
  Json& presets = answer["presets"];
  for (const TransformerSpec& model : TransformerPresets()) presets["model"].push_back(model.name);
  for (const ClusterPreset& cluster : AllClusterPresets()) {
    presets["platform"].push_back(cluster.name);
  }
  for (const ScheduleInfo& schedule : AllSchedules()) {
    presets["schedule"].push_back(std::string(schedule.name));
  }
  return FormatJsonPretty(answer);
}

ApiResponse UploadApi(std::string_view name, std::string_view bytes, const ApiFolders& folders) {
  if (!ValidUploadName(name)) {
    return ErrorResponse(400, "name: invalid upload name '" + Printable(name) +
                                  "'; use letters, digits, '.', '-' and '_' (at most 100, not "
                                  "starting with '.')");
  }
  const std::string path = folders.uploads + "/" + std::string(name);
  // The uploads together stay within their limit (a file replaced counts once).
  int64_t kept = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folders.uploads, error)) {
    if (entry.path().filename() == name) continue;
    kept += static_cast<int64_t>(entry.file_size(error));
  }
  if (kept + static_cast<int64_t>(bytes.size()) > folders.max_uploads_bytes) {
    return ErrorResponse(413, "uploads: " + std::to_string(kept) + " bytes kept already; the "
                                  "uploads together are kept up to " +
                                  std::to_string(folders.max_uploads_bytes) +
                                  " bytes (--max-uploads; restart the server to clear them)");
  }
  const Status status = WriteWholeFile("upload", path, bytes);
  if (!status.ok()) return ErrorResponse(500, status.message());
  Json answer;
  answer["field_value"] = std::string(kUpload) + std::string(name);
  answer["bytes"] = bytes.size();
  return {200, "application/json", FormatJsonPretty(answer)};
}

std::string SerializeResponse(const ApiResponse& response) {
  return std::to_string(response.status) + " " + response.content_type + "\n" + response.body;
}

ApiResponse ParseResponse(std::string_view text) {
  const size_t space = text.find(' ');
  const size_t newline = text.find('\n');
  int64_t status = 0;
  if (space == std::string_view::npos || newline == std::string_view::npos || space > newline ||
      !ParseWhole(std::string(text.substr(0, space)), &status)) {
    return ErrorResponse(500, "the simulation's process sent no complete answer");
  }
  return {static_cast<int>(status), std::string(text.substr(space + 1, newline - space - 1)),
          std::string(text.substr(newline + 1))};
}

}  // namespace ppsim::serve
