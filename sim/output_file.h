// A file written whole or not at all: bytes go to "PATH.tmp", which Commit() renames to PATH.
// Compressed with gzip when PATH ends in ".gz". Gzip output carries no time stamp, so equal bytes
// in give equal files.
#ifndef PPSIM_SIM_OUTPUT_FILE_H_
#define PPSIM_SIM_OUTPUT_FILE_H_

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <memory>
#include <string>
#include <string_view>

#include "schedules/status.h"

namespace ppsim {

class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Removes the temporary file unless Commit() succeeded.
  ~OutputFile();

  // Creates PATH.tmp. InvalidInput naming `what` (a flag) when it cannot be created.
  Status Open(std::string_view what, const std::string& path);
  // The stream to write to. REQUIRES: Open() succeeded, Commit() not called.
  google::protobuf::io::CodedOutputStream* out() { return coded_.get(); }
  // Flushes, closes and renames to PATH. InvalidInput naming `what` on a write error.
  Status Commit();

  static bool Gzipped(std::string_view path) { return path.ends_with(".gz"); }

 private:
  std::string what_;
  std::string path_;
  std::string temporary_;
  int fd_ = -1;
  std::unique_ptr<google::protobuf::io::FileOutputStream> file_;
  std::unique_ptr<google::protobuf::io::GzipOutputStream> gzip_;
  std::unique_ptr<google::protobuf::io::CodedOutputStream> coded_;
};

}  // namespace ppsim

#endif  // PPSIM_SIM_OUTPUT_FILE_H_
