#include "base/shell_words.h"

#include <optional>

namespace ppsim {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

std::string At(size_t i) { return "character " + std::to_string(i + 1); }

Status Expansion(size_t i, char c) {
  return Status::InvalidInput(At(i) + ": '" + std::string(1, c) +
                              "' would be expanded by a shell; write the value itself (or "
                              "single-quote it to mean the character)");
}

// A splitter over one string: `i` is the next character; `word` the word being built, absent
// between words (so that '' can make an empty word).
class Splitter {
 public:
  explicit Splitter(std::string_view text) : text_(text) {}

  Status Run(std::vector<std::string>* words) {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (IsBlank(c)) {
        EndWord(words);
        ++i_;
      } else if (c == '#' && !word_) {
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;
      } else {
        RETURN_IF_ERROR(Unquoted(c));
      }
    }
    EndWord(words);
    return Status();
  }

 private:
  void EndWord(std::vector<std::string>* words) {
    if (word_) words->push_back(std::move(*word_));
    word_.reset();
  }
  std::string& Word() {
    if (!word_) word_.emplace();
    return *word_;
  }

  Status Unquoted(char c) {
    const std::string_view kOperators = "|&;<>()";
    if (c == '$' || c == '`') return Expansion(i_, c);
    if (kOperators.find(c) != std::string_view::npos) {
      return Status::InvalidInput(At(i_) + ": '" + std::string(1, c) +
                                  "' is a shell operator; quote it to mean the character");
    }
    if (c == '\'') return SingleQuoted();
    if (c == '"') return DoubleQuoted();
    if (c == '\\') {
      if (i_ + 1 >= text_.size()) {
        return Status::InvalidInput(At(i_) +
                                    ": a backslash ends the string; escape a character "
                                    "after it, or remove it");
      }
      if (text_[i_ + 1] != '\n') Word() += text_[i_ + 1];  // backslash-newline: a continuation
      i_ += 2;
      return Status();
    }
    Word() += c;
    ++i_;
    return Status();
  }

  Status SingleQuoted() {
    const size_t open = i_;
    const size_t close = text_.find('\'', open + 1);
    if (close == std::string_view::npos) {
      return Status::InvalidInput("unterminated single quote opened at " + At(open) +
                                  "; close it with '");
    }
    Word() += text_.substr(open + 1, close - open - 1);
    i_ = close + 1;
    return Status();
  }

  Status DoubleQuoted() {
    const size_t open = i_;
    std::string& word = Word();
    for (++i_; i_ < text_.size(); ++i_) {
      const char c = text_[i_];
      if (c == '"') {
        ++i_;
        return Status();
      }
      if (c == '$' || c == '`') return Expansion(i_, c);
      if (c == '\\' && i_ + 1 < text_.size()) {
        const char next = text_[i_ + 1];
        if (next == '\n') {
          ++i_;
          continue;
        }
        if (next == '$' || next == '`' || next == '"' || next == '\\') {
          word += next;
          ++i_;
          continue;
        }
      }
      word += c;
    }
    return Status::InvalidInput("unterminated double quote opened at " + At(open) +
                                "; close it with \"");
  }

  std::string_view text_;
  size_t i_ = 0;
  std::optional<std::string> word_;
};

}  // namespace

Status SplitShellWords(std::string_view text, std::vector<std::string>* words) {
  words->clear();
  Status status = Splitter(text).Run(words);
  if (!status.ok()) words->clear();
  return status;
}

}  // namespace ppsim
