#include "base/embedded.h"

namespace ppsim {

const EmbeddedFile* FindEmbeddedFile(EmbeddedFiles files, std::string_view name) {
  for (const EmbeddedFile& file : files) {
    if (file.name == name) return &file;
  }
  return nullptr;
}

std::string_view EmbeddedFileStem(const EmbeddedFile& file) {
  std::string_view stem = file.name;
  if (const size_t slash = stem.rfind('/'); slash != std::string_view::npos) {
    stem.remove_prefix(slash + 1);
  }
  return stem.substr(0, stem.rfind('.'));  // "gpt3-1.5b.textproto": only the last dot
}

}  // namespace ppsim
