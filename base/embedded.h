// Files compiled into the program. Data that reads best as a file of its own (the cluster and
// model presets, the timeline page's script and style) lives in the source tree as that file;
// ppsim_embed (cmake/Embed.cmake) copies its bytes into the program at build time, as a table
// that a function of the owning folder returns (declared in that folder's header, e.g.
// ClusterPresetFiles in platforms/cluster.h). Nothing is read from disk at run time, so the
// program behaves the same wherever it is installed.
#ifndef PPSIM_BASE_EMBEDDED_H_
#define PPSIM_BASE_EMBEDDED_H_

#include <span>
#include <string_view>

namespace ppsim {

struct EmbeddedFile {
  std::string_view name;  // as listed in ppsim_embed, relative to the folder: "presets/x.textproto"
  std::string_view bytes;  // the file's bytes, exactly; static storage
};

// One folder's embedded files, in the order its ppsim_embed lists them; static storage.
using EmbeddedFiles = std::span<const EmbeddedFile>;

// The file called `name` in `files`, or null.
const EmbeddedFile* FindEmbeddedFile(EmbeddedFiles files, std::string_view name);

// The file's name without its folders and its last extension: "presets/gpt3-1.5b.textproto" ->
// "gpt3-1.5b".
std::string_view EmbeddedFileStem(const EmbeddedFile& file);

}  // namespace ppsim

#endif  // PPSIM_BASE_EMBEDDED_H_
