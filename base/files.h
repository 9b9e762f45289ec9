// Files: the one reader, and the one writer — a file written whole or not at all: bytes go to
// "PATH.tmp", which Commit() renames to PATH, so a reader never sees half a file. Trace files are
// compressed with gzip when PATH ends in ".gz"; gzip output carries no time stamp, so equal bytes
// in give equal files.
#ifndef PPSIM_BASE_FILES_H_
#define PPSIM_BASE_FILES_H_

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

// InvalidInput "WHAT: 'OUTPUT' is also an input of this command (INPUT); choose another file"
// when `output` is the same file as one of `inputs` (through any path: links, "./", "..").
// Outputs that do not exist yet are not inputs.
Status CheckNotAnInput(std::string_view what, const std::string& output,
                       const std::vector<std::string>& inputs);

// Writes all of `data` to the file descriptor `fd`, retrying short writes and interruptions;
// false (errno set) when a write fails.
bool WriteAll(int fd, std::string_view data);

// Reads the whole file at `path` into *text. InvalidInput "PATH: cannot read: REASON" when it
// cannot be opened or read (a folder, a missing file, no permission), and "PATH: N bytes; WHAT
// files are read up to M bytes" when it is larger than `max_bytes` (checked before reading).
// The text is UTF-8 (DecodeText) unless `raw` (a format that declares its own encoding: XML).
Status ReadFile(const std::string& path, std::string* text,
                int64_t max_bytes = std::numeric_limits<int64_t>::max(), std::string_view what = "",
                bool raw = false);

// Text files are read as UTF-8, as editors on other systems save them too: a UTF-8 byte-order
// mark is dropped, and UTF-16 with a byte-order mark (little or big endian) becomes UTF-8.
// InvalidInput "SOURCE: ..." for UTF-32, for UTF-16 without a byte-order mark (a NUL byte among
// the first bytes) and for UTF-16 that does not decode (a lone surrogate, an odd length), saying
// to save the file as UTF-8.
Status DecodeText(const std::string& source, std::string* text);

class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Removes the temporary file unless Commit() succeeded.
  ~OutputFile();

  enum class Compression { kByName, kNone };
  // Creates PATH.tmp; gzip when `compression` is kByName and PATH ends in ".gz". InvalidInput
  // when it cannot be created: "WHAT: cannot write 'PATH': REASON" with `what` (a flag), or
  // "PATH: cannot write: REASON" when `what` is empty.
  Status Open(std::string_view what, const std::string& path,
              Compression compression = Compression::kByName);
  // The stream to write to. REQUIRES: Open() succeeded, Commit() not called.
  google::protobuf::io::CodedOutputStream* out() { return coded_.get(); }
  // Flushes, closes and renames to PATH. InvalidInput naming `what` on a write error.
  Status Commit();

  static bool Gzipped(std::string_view path) { return path.ends_with(".gz"); }

 private:
  Status Error(const char* reason) const;

  std::string what_;
  std::string path_;
  std::string temporary_;
  int fd_ = -1;
  std::unique_ptr<google::protobuf::io::FileOutputStream> file_;
  std::unique_ptr<google::protobuf::io::GzipOutputStream> gzip_;
  std::unique_ptr<google::protobuf::io::CodedOutputStream> coded_;
};

// Writes `text` to `path` whole (through PATH.tmp), uncompressed. Messages as OutputFile::Open.
Status WriteWholeFile(std::string_view what, const std::string& path, std::string_view text);

}  // namespace ppsim

#endif  // PPSIM_BASE_FILES_H_
