// A minimal JSON reader for test data (objects, arrays, strings, numbers, true, false, null).
// Tests only: it assumes well-formed input and reports failure as a null value.
#ifndef PPSIM_TESTS_SUPPORT_JSON_H_
#define PPSIM_TESTS_SUPPORT_JSON_H_

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ppsim::testing {

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  const Json& operator[](const std::string& key) const {
    static const Json kNull;
    auto it = object.find(key);
    return it == object.end() ? kNull : it->second;
  }
  bool is_null() const { return kind == Kind::kNull; }
  int integer() const { return static_cast<int>(number); }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : text_(text) {}

  Json Read() {
    Skip();
    Json value;
    if (pos_ >= text_.size()) return value;
    const char c = text_[pos_];
    if (c == '{') {
      value.kind = Json::Kind::kObject;
      ++pos_;
      Skip();
      if (Peek() == '}') {
        ++pos_;
        return value;
      }
      while (true) {
        Skip();
        const std::string key = ReadString();
        Skip();
        ++pos_;  // ':'
        value.object[key] = Read();
        Skip();
        if (text_[pos_++] == '}') break;  // else ','
      }
    } else if (c == '[') {
      value.kind = Json::Kind::kArray;
      ++pos_;
      Skip();
      if (Peek() == ']') {
        ++pos_;
        return value;
      }
      while (true) {
        value.array.push_back(Read());
        Skip();
        if (text_[pos_++] == ']') break;  // else ','
      }
    } else if (c == '"') {
      value.kind = Json::Kind::kString;
      value.string = ReadString();
    } else if (text_.compare(pos_, 4, "true") == 0) {
      value.kind = Json::Kind::kBool;
      value.boolean = true;
      pos_ += 4;
    } else if (text_.compare(pos_, 5, "false") == 0) {
      value.kind = Json::Kind::kBool;
      pos_ += 5;
    } else if (text_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
    } else {
      value.kind = Json::Kind::kNumber;
      char* end = nullptr;
      value.number = std::strtod(text_.c_str() + pos_, &end);
      pos_ = static_cast<size_t>(end - text_.c_str());
    }
    return value;
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  std::string ReadString() {
    std::string out;
    ++pos_;  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') {
        ++pos_;
        const char e = text_[pos_];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        out += text_[pos_];
      }
      ++pos_;
    }
    ++pos_;  // closing quote
    return out;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace ppsim::testing

#endif  // PPSIM_TESTS_SUPPORT_JSON_H_
