#include "config/config_file.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/reflection.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "base/escape.h"
#include "base/files.h"
#include "base/names.h"
#include "config/config_json.h"
#include "config/config_textproto.h"
#include "config/config_tree.h"
#include "config/config_values.h"
#include "config/config_yaml.h"

namespace ppsim {
namespace {

using config_internal::ConfigEntry;
using config_internal::ConfigError;
using config_internal::ConfigNode;
using config_internal::FieldPath;
using config_internal::IndexPath;
using config_internal::SourceText;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::OneofDescriptor;
using google::protobuf::Reflection;

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }


std::string Describe(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::kNull:
      return "null";
    case ConfigNode::Kind::kScalar:
      return Quoted(node.text);
    case ConfigNode::Kind::kList:
      return "a list";
    case ConfigNode::Kind::kMap:
      return "a map";
  }
  return "";
}

const FieldDescriptor* FindField(const Descriptor* type, const std::string& key) {
  if (const FieldDescriptor* field = type->FindFieldByName(key)) return field;
  for (int i = 0; i < type->field_count(); ++i) {
    if (type->field(i)->json_name() == key) return type->field(i);
  }
  return nullptr;
}

// JSON and YAML: the located tree into a message, by reflection. Every problem is collected.
class TreeFiller {
 public:
  TreeFiller(const SourceText& source, ConfigLocations* locations, std::vector<ConfigError>* errors)
      : source_(source), locations_(locations), errors_(errors) {}

  void FillMessage(const ConfigNode& node, Message* message, const std::string& path) {
    if (node.kind == ConfigNode::Kind::kNull) return;
    if (node.kind != ConfigNode::Kind::kMap) {
      Complain(node.offset, path, "expected a map of fields, got " + Describe(node));
      return;
    }
    const Descriptor* type = message->GetDescriptor();
    std::map<const FieldDescriptor*, size_t> seen;
    std::map<const OneofDescriptor*, const FieldDescriptor*> oneofs_seen;
    for (const ConfigEntry& entry : node.entries) {
      const FieldDescriptor* field = FindField(type, entry.key);
      if (field == nullptr) {
        Complain(entry.key_offset, FieldPath(path, Printable(entry.key)),
                 UnknownField(type, entry.key));
        continue;
      }
      const std::string field_path = FieldPath(path, field->name());
      if (const auto [it, inserted] = seen.emplace(field, entry.key_offset); !inserted) {
        Complain(entry.key_offset, field_path, "duplicate key; first at " + LineColumn(it->second));
        continue;
      }
      if (entry.value.kind == ConfigNode::Kind::kNull) continue;
      if (const OneofDescriptor* oneof = field->real_containing_oneof()) {
        const auto [it, inserted] = oneofs_seen.emplace(oneof, field);
        if (!inserted) {
          std::vector<std::string> members;
          for (int i = 0; i < oneof->field_count(); ++i) members.push_back(oneof->field(i)->name());
          Complain(entry.key_offset, field_path,
                   "only one of " + JoinNames(members) + " may be set; " + it->second->name() +
                       " is set at " + LineColumn(seen[it->second]));
          continue;
        }
      }
      FillField(entry.value, message, field, field_path);
    }
  }

 private:
  std::string LineColumn(size_t offset) const {
    const auto [line, column] = source_.LineColumn(offset);
    return std::to_string(line) + ":" + std::to_string(column);
  }

  void Complain(size_t offset, const std::string& path, const std::string& what) {
    errors_->push_back({offset, path.empty() ? what : path + ": " + what});
  }

  void Record(const std::string& path, size_t offset) {
    const auto [line, column] = source_.LineColumn(offset);
    locations_->Set(path, line, column);
  }

  // REQUIRES: value is not null.
  void FillField(const ConfigNode& value, Message* message, const FieldDescriptor* field,
                 const std::string& path) {
    if (field->is_map()) {
      FillMap(value, message, field, path);
      return;
    }
    if (field->is_repeated()) {
      if (value.kind != ConfigNode::Kind::kList) {
        Complain(value.offset, path, "expected a list, got " + Describe(value));
        return;
      }
      Record(path, value.offset);
      for (size_t i = 0; i < value.items.size(); ++i) {
        FillOne(value.items[i], message, field, IndexPath(path, std::to_string(i)),
                "null is not allowed in a list");
      }
      return;
    }
    FillOne(value, message, field, path, "");
  }

  // One value of `field`: the field itself, or an element of a repeated one.
  void FillOne(const ConfigNode& value, Message* message, const FieldDescriptor* field,
               const std::string& path, const std::string& null_complaint) {
    if (value.kind == ConfigNode::Kind::kNull) {
      Complain(value.offset, path, null_complaint);
      return;
    }
    const Reflection* reflection = message->GetReflection();
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (value.kind != ConfigNode::Kind::kMap) {
        Complain(value.offset, path, "expected a map of fields, got " + Describe(value));
        return;
      }
      Record(path, value.offset);
      FillMessage(value,
                  field->is_repeated() ? reflection->AddMessage(message, field)
                                       : reflection->MutableMessage(message, field),
                  path);
      return;
    }
    if (value.kind != ConfigNode::Kind::kScalar) {
      Complain(value.offset, path, ExpectedValue(field) + ", got " + Describe(value));
      return;
    }
    if (std::string complaint = SetScalarField(message, field, value.text); !complaint.empty()) {
      Complain(value.offset, path, complaint);
      return;
    }
    Record(path, value.offset);
  }

  // A map<K, V> field, written as a map from keys to values. Paths are "field[key]".
  void FillMap(const ConfigNode& value, Message* message, const FieldDescriptor* field,
               const std::string& path) {
    if (value.kind != ConfigNode::Kind::kMap) {
      Complain(value.offset, path, "expected a map, got " + Describe(value));
      return;
    }
    Record(path, value.offset);
    const FieldDescriptor* key_field = field->message_type()->map_key();
    const FieldDescriptor* value_field = field->message_type()->map_value();
    std::map<std::string, size_t> seen;
    for (const ConfigEntry& entry : value.entries) {
      const std::string entry_path = IndexPath(path, Printable(entry.key));
      if (const auto [it, inserted] = seen.emplace(entry.key, entry.key_offset); !inserted) {
        Complain(entry.key_offset, entry_path, "duplicate key; first at " + LineColumn(it->second));
        continue;
      }
      Message* pair = message->GetReflection()->AddMessage(message, field);
      if (std::string complaint = SetScalarField(pair, key_field, entry.key); !complaint.empty()) {
        Complain(entry.key_offset, entry_path, "invalid key: " + complaint);
        continue;
      }
      FillOne(entry.value, pair, value_field, entry_path, "null is not allowed as a map value");
    }
  }

  const SourceText& source_;
  ConfigLocations* locations_;
  std::vector<ConfigError>* errors_;
};

}  // namespace

std::string ConfigLocations::Where(const std::string& field_path) const {
  const auto it = positions_.find(field_path);
  if (it == positions_.end()) return source_;
  return source_ + ":" + std::to_string(it->second.first) + ":" + std::to_string(it->second.second);
}

void ConfigLocations::Set(const std::string& field_path, int line, int column) {
  positions_[field_path] = {line, column};
}

Status ConfigFormatOf(const std::string& path, ConfigFormat* format) {
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  std::string extension = dot == std::string::npos ? "" : name.substr(dot);
  for (char& c : extension) c = Lower(c);
  if (extension == ".textproto" || extension == ".pbtxt" || extension == ".txtpb") {
    *format = ConfigFormat::kTextProto;
  } else if (extension == ".json") {
    *format = ConfigFormat::kJson;
  } else if (extension == ".yaml" || extension == ".yml") {
    *format = ConfigFormat::kYaml;
  } else {
    return Status::InvalidInput(path +
                                ": unknown configuration format; use .textproto, .pbtxt, .txtpb, "
                                ".json, .yaml or .yml");
  }
  return Status();
}

Status ParseConfig(std::string_view text, ConfigFormat format, const std::string& source,
                   google::protobuf::Message* message, ConfigLocations* locations) {
  message->Clear();
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // A UTF-8 byte order mark.
  const SourceText source_text(text);
  ConfigLocations found;
  found.set_source(source);
  std::vector<ConfigError> errors;
  if (format == ConfigFormat::kTextProto) {
    config_internal::ReadTextProto(source_text, message, &found, &errors);
  } else {
    ConfigNode root;
    ConfigError error;
    const bool read = format == ConfigFormat::kJson
                          ? config_internal::ReadJson(text, &root, &error)
                          : config_internal::ReadYaml(text, &root, &error);
    if (read) {
      TreeFiller(source_text, &found, &errors).FillMessage(root, message, "");
    } else {
      errors.push_back(error);
    }
  }
  if (locations != nullptr) {
    *locations = ConfigLocations();
    locations->set_source(source);
  }
  if (errors.empty()) {
    if (locations != nullptr) *locations = std::move(found);
    return Status();
  }
  message->Clear();
  std::stable_sort(errors.begin(), errors.end(),
                   [](const ConfigError& a, const ConfigError& b) { return a.offset < b.offset; });
  std::string all;
  std::string previous;
  for (const ConfigError& error : errors) {
    const auto [line, column] = source_text.LineColumn(error.offset);
    const std::string one =
        source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + error.message;
    if (one == previous) continue;
    all += (all.empty() ? "" : "\n") + one;
    previous = one;
  }
  return Status::InvalidInput(all);
}

Status ReadConfigFile(const std::string& path, google::protobuf::Message* message,
                      ConfigLocations* locations) {
  ConfigFormat format;
  RETURN_IF_ERROR(ConfigFormatOf(path, &format));
  std::string text;
  if (Status status = ReadFile(path, &text, kMaxConfigBytes, "configuration"); !status.ok()) {
    return status;
  }
  return ParseConfig(text, format, path, message, locations);
}

}  // namespace ppsim
