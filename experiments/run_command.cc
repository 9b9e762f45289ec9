#include "experiments/run_command.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "base/numbers.h"

namespace ppsim {
namespace {

namespace pb = google::protobuf;

// `word` as a POSIX shell reads it back: as it is when it holds only safe characters, else in
// single quotes (a quote inside as '\'').
std::string ShellWord(const std::string& word) {
  bool safe = !word.empty();
  for (char c : word) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    safe = safe && (plain || std::string_view("-_./:=,+@%").find(c) != std::string_view::npos);
  }
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The text of a set singular field.
std::string ValueText(const pb::Message& message, const pb::FieldDescriptor* field) {
  const pb::Reflection* r = message.GetReflection();
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return std::to_string(r->GetInt32(message, field));
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return std::to_string(r->GetInt64(message, field));
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return FormatNumber(r->GetDouble(message, field));
    default:
      return r->GetString(message, field);
  }
}

}  // namespace

std::vector<std::string> RunFlags(const proto::RunConfig& config, const Locator& flags) {
  const pb::Descriptor* descriptor = config.GetDescriptor();
  const pb::Reflection* r = config.GetReflection();
  std::vector<std::string> words;
  for (int k = 0; k < descriptor->field_count(); ++k) {
    const pb::FieldDescriptor* field = descriptor->field(k);
    const std::string flag = flags.Name(field->name());
    if (field->is_repeated()) {
      for (int i = 0; i < r->FieldSize(config, field); ++i) {
        words.push_back(flag);
        words.push_back(r->GetRepeatedString(config, field, i));
      }
      continue;
    }
    if (!r->HasField(config, field)) continue;
    if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
      if (r->GetBool(config, field)) words.push_back(flag);
      continue;
    }
    words.push_back(flag);
    words.push_back(ValueText(config, field));
  }
  return words;
}

std::string RunCommandLine(const proto::RunConfig& config, const Locator& flags) {
  std::string line = "ppsim run";
  for (const std::string& word : RunFlags(config, flags)) line += " " + ShellWord(word);
  return line;
}

}  // namespace ppsim
