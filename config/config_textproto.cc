#include "config/config_textproto.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/names.h"
#include "config/config_values.h"

namespace ppsim::config_internal {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::TextFormat;
using google::protobuf::io::Tokenizer;

constexpr size_t kNone = static_cast<size_t>(-1);

// A token as the parser's tokenizer reads it, with its tokenizer position (0-based line; columns
// in which a tab advances to the next multiple of 8) and its byte offsets.
struct Token {
  Tokenizer::TokenType type;
  std::string text;
  int line;
  int column;
  int end_column;
  size_t begin;
  size_t end;

  bool Is(std::string_view symbol) const {
    return type == Tokenizer::TYPE_SYMBOL && text == symbol;
  }
  bool Opens() const { return Is("{") || Is("[") || Is("<"); }
  bool Closes() const { return Is("}") || Is("]") || Is(">"); }
};

// Tokenizer positions to byte offsets, for positions met in increasing order: linear in the
// text even when it is one long line.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  size_t OffsetOf(int line, int column) {
    while (line_ < line && offset_ < text_.size()) Step();
    while (line_ == line && column_ < column && offset_ < text_.size() && text_[offset_] != '\n') {
      Step();
    }
    return offset_;
  }

 private:
  void Step() {
    if (text_[offset_] == '\n') {
      ++line_;
      column_ = 0;
    } else {
      column_ = text_[offset_] == '\t' ? column_ + 8 - column_ % 8 : column_ + 1;
    }
    ++offset_;
  }

  std::string_view text_;
  size_t offset_ = 0;
  int line_ = 0;
  int column_ = 0;
};

// The tokenizer's own complaints come to the parser's collector too; this pass ignores them.
class IgnoreErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, int, const std::string&) override {}
};

// Every token of `text`, read with the settings TextFormat::Parser gives its tokenizer.
std::vector<Token> Tokenize(std::string_view text) {
  // The parser refuses such a text whole ("Input size too large").
  if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return {};
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  IgnoreErrors ignore;
  Tokenizer tokenizer(&input, &ignore);
  tokenizer.set_allow_f_after_float(true);
  tokenizer.set_comment_style(Tokenizer::SH_COMMENT_STYLE);
  Cursor cursor(text);
  std::vector<Token> tokens;
  while (tokenizer.Next()) {
    const Tokenizer::Token& t = tokenizer.current();
    const size_t begin = cursor.OffsetOf(t.line, t.column);
    const size_t end = cursor.OffsetOf(t.line, t.end_column);
    tokens.push_back({t.type, t.text, t.line, t.column, t.end_column, begin, end});
  }
  return tokens;
}

// What the parser reported, in its order.
class Reports : public google::protobuf::io::ErrorCollector {
 public:
  struct Report {
    int line;
    int column;
    std::string message;
    bool warning;
  };
  void AddError(int line, int column, const std::string& message) override {
    reports_.push_back({line, column, message, false});
  }
  void AddWarning(int line, int column, const std::string& message) override {
    reports_.push_back({line, column, message, true});
  }
  const std::vector<Report>& reports() const { return reports_; }

 private:
  std::vector<Report> reports_;
};

// A message written in the text: its type, what protobuf recorded about it, and its tokens.
struct Written {
  const Descriptor* type;
  const TextFormat::ParseInfoTree* tree;
  const Message* message;  // The parsed value; null when the parse failed.
  std::string path;
  size_t open;   // The token index of its '{' or '<'; kNone for the top message.
  size_t close;  // Of its '}' or '>'.
};

// One value of a field: its first and last token.
struct Value {
  size_t first;
  size_t last;
};

// One reading: protobuf's parse, then the tokens it read, to locate values and place names.
class TextReader {
 public:
  TextReader(const SourceText& source, ConfigLocations* locations, std::vector<ConfigError>* errors)
      : source_(source), locations_(locations), errors_(errors) {}

  void Read(Message* message) {
    Reports reports;
    TextFormat::ParseInfoTree tree;
    TextFormat::Parser parser;
    parser.RecordErrorsTo(&reports);
    parser.WriteLocationsTo(&tree);
    // Unknown fields become warnings and the parse goes on, so all of them are reported.
    parser.AllowUnknownField(true);
    parser.SetRecursionLimit(kMaxNesting);
    parsed_ = parser.ParseFromString(std::string(source_.text()), message);

    tokens_ = Tokenize(source_.text());
    MatchBrackets();
    // Fields are placed in the top message only when the parse reached its end: after a failure
    // the messages left open (the top one among them) have no recorded range, so a name inside
    // them could belong to any of them.
    if (parsed_) written_.push_back({message->GetDescriptor(), &tree, message, "", kNone, kNone});
    Walk({message->GetDescriptor(), &tree, parsed_ ? message : nullptr, "", kNone, kNone});

    for (const Reports::Report& report : reports.reports()) {
      if (report.warning) {
        Warn(report);
      } else {
        errors_->push_back({OffsetOf(report.line, report.column), report.message});
      }
    }
  }

 private:
  // The byte offset of a position the parser reported: the start of a token, or (for the
  // tokenizer's complaints inside one) any character.
  size_t OffsetOf(int line, int column) const {
    const size_t i = TokenAt(line, column);
    if (i < tokens_.size() && tokens_[i].line == line && tokens_[i].column == column) {
      return tokens_[i].begin;
    }
    return source_.OffsetOfTokenizerPosition(line, column);
  }

  // The first token starting at or after the position.
  size_t TokenAt(int line, int column) const {
    return std::lower_bound(tokens_.begin(), tokens_.end(), std::pair{line, column},
                            [](const Token& t, const std::pair<int, int>& at) {
                              return std::pair{t.line, t.column} < at;
                            }) -
           tokens_.begin();
  }

  // The token ending exactly at the position, or kNone.
  size_t TokenEndingAt(int line, int end_column) const {
    const size_t i = std::lower_bound(tokens_.begin(), tokens_.end(), std::pair{line, end_column},
                                      [](const Token& t, const std::pair<int, int>& at) {
                                        return std::pair{t.line, t.end_column} < at;
                                      }) -
                     tokens_.begin();
    if (i < tokens_.size() && tokens_[i].line == line && tokens_[i].end_column == end_column) {
      return i;
    }
    return kNone;
  }

  // partner_[i] is the index of the bracket closing (or opened by) token i, kNone if unmatched.
  void MatchBrackets() {
    partner_.assign(tokens_.size(), kNone);
    std::vector<size_t> open;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].Opens()) {
        open.push_back(i);
      } else if (tokens_[i].Closes() && !open.empty()) {
        partner_[i] = open.back();
        partner_[open.back()] = i;
        open.pop_back();
      }
    }
  }

  // The values of the field written in `range` (from the field's name to the end of its value,
  // a separator ';' or ',' after it included): one, or each element of a [list].
  std::vector<Value> ValuesIn(const TextFormat::ParseLocationRange& range,
                              const FieldDescriptor* field) const {
    const size_t name = TokenAt(range.start.line, range.start.column);
    size_t last = TokenEndingAt(range.end.line, range.end.column);
    if (name >= tokens_.size() || last == kNone || last <= name) return {};
    if (tokens_[last].Is(";") || tokens_[last].Is(",")) --last;
    size_t first = name + 1;
    if (tokens_[name].Is("[") && partner_[name] != kNone) first = partner_[name] + 1;  // [ext]
    if (first <= last && tokens_[first].Is(":")) ++first;
    if (first > last) return {};
    if (!field->is_repeated() || !tokens_[first].Is("[") || partner_[first] != last) {
      return {{first, last}};
    }
    // A list, split at the commas between its elements.
    std::vector<Value> values;
    size_t start = first + 1;
    for (size_t i = start; i < last; ++i) {
      if (tokens_[i].Opens() && partner_[i] != kNone) {
        i = partner_[i];
      } else if (tokens_[i].Is(",")) {
        values.push_back({start, i - 1});
        start = i + 1;
      }
    }
    if (start < last) values.push_back({start, last - 1});
    return values;
  }

  void Record(const std::string& path, size_t token) {
    const auto [line, column] = source_.LineColumn(tokens_[token].begin);
    locations_->Set(path, line, column);
  }

  // Locates every value protobuf recorded in `written`, checks its enums, and goes into its
  // messages. A singular field written twice is only reported: its recorded place is the first
  // value, its parsed value the last.
  void Walk(const Written& written) {
    const Reflection* reflection = written.message ? written.message->GetReflection() : nullptr;
    const std::set<std::string> twice =
        written.message ? FindDuplicates(written) : std::set<std::string>();
    for (int f = 0; f < written.type->field_count(); ++f) {
      const FieldDescriptor* field = written.type->field(f);
      if (twice.count(field->name()) > 0) continue;
      const std::string base = FieldPath(written.path, field->name());
      int index = 0;
      for (int occurrence = field->is_repeated() ? 0 : -1;; ++occurrence) {
        const TextFormat::ParseLocationRange range =
            written.tree->GetLocationRange(field, occurrence);
        if (range.start.line < 0) break;
        const std::vector<Value> values = ValuesIn(range, field);
        if (field->is_repeated() && index == 0 && !values.empty()) {
          // The field itself: at its list's '[' or its first value.
          const size_t name_end = values.front().first;
          Record(base, name_end > 0 && tokens_[name_end - 1].Is("[") ? name_end - 1 : name_end);
        }
        for (const Value& value : values) {
          const int element = field->is_repeated() ? index++ : -1;
          const std::string path =
              field->is_repeated() ? IndexPath(base, std::to_string(element)) : base;
          Visit(written, reflection, field, element, path, value);
        }
        if (!field->is_repeated()) break;
      }
    }
  }

  void Visit(const Written& written, const Reflection* reflection, const FieldDescriptor* field,
             int element, const std::string& path, const Value& value) {
    Record(path, value.first);
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      const TextFormat::ParseInfoTree* nested = written.tree->GetTreeForNested(field, element);
      if (nested == nullptr || !tokens_[value.first].Opens()) return;
      const Message* message = nullptr;
      if (reflection != nullptr) {
        if (element < 0) {
          message = &reflection->GetMessage(*written.message, field);
        } else if (element < reflection->FieldSize(*written.message, field)) {
          message = &reflection->GetRepeatedMessage(*written.message, field, element);
        }
      }
      Written inner{field->message_type(), nested, message, path, value.first, value.last};
      written_.push_back(inner);
      Walk(inner);
      return;
    }
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_ENUM || reflection == nullptr) return;
    // proto3 enums are open: the parser takes any number, but only named values are valid.
    int number;
    if (element < 0) {
      number = reflection->GetEnumValue(*written.message, field);
    } else if (element < reflection->FieldSize(*written.message, field)) {
      number = reflection->GetRepeatedEnumValue(*written.message, field, element);
    } else {
      return;
    }
    if (field->enum_type()->FindValueByNumber(number) != nullptr) return;
    const size_t begin = tokens_[value.first].begin;
    const std::string_view as_written =
        source_.text().substr(begin, tokens_[value.last].end - begin);
    errors_->push_back(
        {begin,
         path + ": " + UnknownName("value", as_written, EnumValueNames(field->enum_type()))});
  }

  // An unknown field's warning comes at the token after its name; the name is placed in the
  // innermost message written around it. Anything else, or a name that cannot be placed, is
  // passed on as protobuf wrote it.
  void Warn(const Reports::Report& report) {
    const size_t at = TokenAt(report.line, report.column);
    const bool after_name = at > 0 && at < tokens_.size() && tokens_[at].line == report.line &&
                            tokens_[at].column == report.column &&
                            tokens_[at - 1].type == Tokenizer::TYPE_IDENTIFIER &&
                            (tokens_[at].Is(":") || tokens_[at].Is("{") || tokens_[at].Is("<"));
    const Written* inside = after_name ? Around(at - 1) : nullptr;
    if (inside != nullptr) {
      const std::string& name = tokens_[at - 1].text;
      if (inside->type->FindFieldByName(name) == nullptr) {
        errors_->push_back({tokens_[at - 1].begin, FieldPath(inside->path, name) + ": " +
                                                       UnknownField(inside->type, name)});
        return;
      }
    }
    errors_->push_back({OffsetOf(report.line, report.column), report.message});
  }

  // The innermost message written around token i, or null.
  const Written* Around(size_t i) const {
    const Written* inside = nullptr;
    for (const Written& written : written_) {
      const bool contains = written.open == kNone || (written.open < i && i < written.close);
      if (contains && (inside == nullptr || inside->open == kNone ||
                       (written.open != kNone && written.open > inside->open))) {
        inside = &written;
      }
    }
    return inside;
  }

  // The fields written directly in `written` (its own names, not its messages'), each name being
  // the identifier before a ':', '{' or '<': reports each singular field written twice, and
  // returns their names.
  std::set<std::string> FindDuplicates(const Written& written) {
    std::set<std::string> twice;
    const size_t begin = written.open == kNone ? 0 : written.open + 1;
    const size_t end = written.open == kNone ? tokens_.size() : written.close;
    std::map<std::string, size_t> first;
    for (size_t i = begin; i < end; ++i) {
      if (tokens_[i].Opens() && partner_[i] != kNone) {
        i = partner_[i];
        continue;
      }
      if (tokens_[i].type != Tokenizer::TYPE_IDENTIFIER || i + 1 >= end ||
          !(tokens_[i + 1].Is(":") || tokens_[i + 1].Is("{") || tokens_[i + 1].Is("<"))) {
        continue;
      }
      const FieldDescriptor* field = written.type->FindFieldByName(tokens_[i].text);
      if (field == nullptr || field->is_repeated()) continue;
      const auto [it, inserted] = first.emplace(tokens_[i].text, tokens_[i].begin);
      if (inserted) continue;
      twice.insert(tokens_[i].text);
      const auto [line, column] = source_.LineColumn(it->second);
      errors_->push_back({tokens_[i].begin,
                          FieldPath(written.path, tokens_[i].text) + ": duplicate key; first at " +
                              std::to_string(line) + ":" + std::to_string(column)});
    }
    return twice;
  }

  const SourceText& source_;
  ConfigLocations* locations_;
  std::vector<ConfigError>* errors_;
  bool parsed_ = false;
  std::vector<Token> tokens_;
  std::vector<size_t> partner_;
  std::vector<Written> written_;  // Every message written, where fields can be placed.
};

}  // namespace

void ReadTextProto(const SourceText& source, Message* message, ConfigLocations* locations,
                   std::vector<ConfigError>* errors) {
  TextReader(source, locations, errors).Read(message);
}

}  // namespace ppsim::config_internal
