#include "interop/megatron_layout.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace ppsim {
namespace {

constexpr std::string_view kValidSymbols =
    "valid: E (embedding), L (loss), t (decoder layer), m (MTP layer), | between stages, "
    "(...)*n and x*n to repeat, commas ignored";

// The count after a '*' at text[at]: the digits' value (saturating above the symbol limit) and
// where they end; false when no digit follows.
bool RepeatCount(std::string_view text, size_t at, int64_t* count, size_t* end) {
  if (at >= text.size() || text[at] != '*') return false;
  size_t i = at + 1;
  int64_t n = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    n = std::min<int64_t>(n * 10 + (text[i] - '0'), kMaxMegatronLayoutSymbols + 1);
    ++i;
  }
  if (i == at + 1) return false;
  *count = n;
  *end = i;
  return true;
}

// Appends `count` copies of `piece`, unless the result would pass the symbol limit.
bool AppendRepeated(std::string_view piece, int64_t count, std::string* out) {
  if (static_cast<int64_t>(out->size()) + static_cast<int64_t>(piece.size()) * count >
      kMaxMegatronLayoutSymbols) {
    return false;
  }
  for (int64_t i = 0; i < count; ++i) out->append(piece);
  return true;
}

// Megatron's first rewrite, re.sub(r'\(([^)]+)\)\*(\d+)', X * n): from each '(' the text up to the
// first ')' (at least one character), if "*n" follows; anything else stays.
bool UnrollGroups(std::string_view text, std::string* out) {
  for (size_t i = 0; i < text.size();) {
    const size_t close = text[i] == '(' ? text.find(')', i + 1) : std::string_view::npos;
    int64_t count = 0;
    size_t end = 0;
    if (close != std::string_view::npos && close > i + 1 &&
        RepeatCount(text, close + 1, &count, &end)) {
      if (!AppendRepeated(text.substr(i + 1, close - i - 1), count, out)) return false;
      i = end;
      continue;
    }
    if (!AppendRepeated(text.substr(i, 1), 1, out)) return false;
    ++i;
  }
  return true;
}

// The second, re.sub(r'(.)\*(\d+)', c * n): any one character (but a line break) and "*n".
bool UnrollCharacters(std::string_view text, std::string* out) {
  for (size_t i = 0; i < text.size();) {
    int64_t count = 0;
    size_t end = 0;
    if (text[i] != '\n' && RepeatCount(text, i + 1, &count, &end)) {
      if (!AppendRepeated(text.substr(i, 1), count, out)) return false;
      i = end;
      continue;
    }
    if (!AppendRepeated(text.substr(i, 1), 1, out)) return false;
    ++i;
  }
  return true;
}

std::string Quoted(char c) {
  if (std::isprint(static_cast<unsigned char>(c))) return std::string("'") + c + "'";
  char code[8];
  std::snprintf(code, sizeof(code), "0x%02x", static_cast<unsigned char>(c));
  return code;
}

// The unrolled symbols, split at '|' into stages.
Status StagesOf(std::string_view text, const std::string& where, std::vector<std::string>* stages) {
  std::string no_commas;
  for (char c : text) {
    if (c != ',') no_commas += c;
  }
  std::string groups, symbols;
  if (!UnrollGroups(no_commas, &groups) || !UnrollCharacters(groups, &symbols)) {
    return Status::InvalidInput(where + ": unrolls to more than " +
                                std::to_string(kMaxMegatronLayoutSymbols) +
                                " layers and stage separators; a model has at most 100000 layers");
  }
  stages->assign(1, "");
  for (char c : symbols) {
    if (c == '|') {
      stages->emplace_back();
    } else if (c == 'E' || c == 'L' || c == 't' || c == 'm') {
      stages->back() += c;
    } else {
      return Status::InvalidInput(where + ": " + Quoted(c) + " in stage " +
                                  std::to_string(stages->size() - 1) + " is not a layer; " +
                                  std::string(kValidSymbols));
    }
  }
  return Status();
}

int32_t CountOf(const std::string& stage, char symbol) {
  return static_cast<int32_t>(std::count(stage.begin(), stage.end(), symbol));
}

// Megatron's validate_layer_layout on the stages in layer order.
Status CheckLayerOrder(const std::vector<std::string>& stages, int32_t pp, int32_t num_layers,
                       int32_t mtp_layers, const std::string& where) {
  std::string order;
  for (const std::string& stage : stages) order += stage;
  auto count = [&](char symbol) { return std::count(order.begin(), order.end(), symbol); };
  if (order.empty() || order.front() != 'E' || count('E') != 1) {
    return Status::InvalidInput(where +
                                ": the embedding (E) must be the first layer of stage 0, "
                                "exactly once; got " +
                                std::to_string(count('E')));
  }
  if (order.back() != 'L' || count('L') != 1) {
    return Status::InvalidInput(where +
                                ": the loss (L) must be the last layer of the last "
                                "stage, exactly once; got " +
                                std::to_string(count('L')));
  }
  if (count('t') != num_layers) {
    return Status::InvalidInput(where + ": " + std::to_string(count('t')) +
                                " decoder layers (t); the model has " + std::to_string(num_layers));
  }
  if (count('m') != mtp_layers) {
    return Status::InvalidInput(where + ": " + std::to_string(count('m')) +
                                " MTP layers (m); the model has " + std::to_string(mtp_layers));
  }
  const size_t first_mtp = order.find('m');
  if (first_mtp != std::string::npos && order.find('t', first_mtp) != std::string::npos) {
    return Status::InvalidInput(where +
                                ": a decoder layer (t) after an MTP layer (m); decoder "
                                "layers come before MTP layers");
  }
  const int32_t v = static_cast<int32_t>(stages.size()) / pp;
  for (int32_t i = 0; i < static_cast<int32_t>(stages.size()); ++i) {
    const int32_t m = CountOf(stages[i], 'm');
    if (m == 0) continue;
    const int32_t rank = i % pp;
    if (i / pp != v - 1 || m != mtp_layers) {
      return Status::InvalidInput(where + ": " + std::to_string(m) + " MTP layers (m) in stage " +
                                  std::to_string(i) + " (rank " + std::to_string(rank) +
                                  "'s virtual stage " + std::to_string(i / pp) + "); all " +
                                  std::to_string(mtp_layers) + " go in one stage, the last " +
                                  "virtual stage of a rank");
    }
  }
  return Status();
}

}  // namespace

Status ParseMegatronLayout(std::string_view text, int32_t pp, int32_t num_layers,
                           int32_t mtp_layers, const std::string& where, MegatronLayout* layout) {
  std::vector<std::string> stages;
  RETURN_IF_ERROR(StagesOf(text, where, &stages));
  if (pp < 1 || stages.size() % pp != 0) {
    return Status::InvalidInput(where + ": " + std::to_string(stages.size()) +
                                " stages are not a multiple of the " + std::to_string(pp) +
                                " pipeline ranks; give V x " + std::to_string(pp) +
                                " stages separated by |");
  }
  RETURN_IF_ERROR(CheckLayerOrder(stages, pp, num_layers, mtp_layers, where));
  *layout = MegatronLayout();
  layout->virtual_stages_per_rank = static_cast<int32_t>(stages.size()) / pp;
  for (const std::string& stage : stages) {
    layout->decoder_layers.push_back(CountOf(stage, 't'));
    layout->mtp_layers.push_back(CountOf(stage, 'm'));
  }
  return Status();
}

}  // namespace ppsim
