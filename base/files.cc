#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/escape.h"

namespace ppsim {

Status CheckNotAnInput(std::string_view what, const std::string& output,
                       const std::vector<std::string>& inputs) {
  std::error_code error;
  if (!std::filesystem::exists(output, error)) return Status();
  for (const std::string& input : inputs) {
    if (input.empty() || !std::filesystem::equivalent(output, input, error)) continue;
    return Status::InvalidInput(std::string(what) + ": '" + Printable(output) +
                                "' is also an input of this command (" + Printable(input) +
                                "); choose another file");
  }
  return Status();
}

bool WriteAll(int fd, std::string_view data) {
  const char* p = data.data();
  size_t size = data.size();
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

namespace {

// Appends code point `c` as UTF-8.
void AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// UTF-16 after its byte-order mark as UTF-8; false when it does not decode.
bool Utf16ToUtf8(std::string_view bytes, bool big_endian, std::string* out) {
  if (bytes.size() % 2 != 0) return false;
  out->clear();
  out->reserve(bytes.size());
  auto unit = [&](size_t i) {
    const auto hi = static_cast<uint8_t>(bytes[big_endian ? i : i + 1]);
    const auto lo = static_cast<uint8_t>(bytes[big_endian ? i + 1 : i]);
    return static_cast<uint32_t>(hi << 8 | lo);
  };
  for (size_t i = 0; i < bytes.size(); i += 2) {
    uint32_t c = unit(i);
    if (c >= 0xDC00 && c <= 0xDFFF) return false;  // a low surrogate first
    if (c >= 0xD800 && c <= 0xDBFF) {
      if (i + 2 >= bytes.size()) return false;
      const uint32_t low = unit(i + 2);
      if (low < 0xDC00 || low > 0xDFFF) return false;
      c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
      i += 2;
    }
    AppendUtf8(c, out);
  }
  return true;
}

}  // namespace

Status DecodeText(const std::string& source, std::string* text) {
  const std::string_view t = *text;
  const std::string save = "; save it as UTF-8";
  if (t.starts_with("\xEF\xBB\xBF")) {
    text->erase(0, 3);
    return Status();
  }
  if (t.starts_with(std::string_view("\xFF\xFE\0\0", 4)) ||
      t.starts_with(std::string_view("\0\0\xFE\xFF", 4))) {
    return Status::InvalidInput(source + ": the file is UTF-32" + save);
  }
  const bool little = t.starts_with("\xFF\xFE");
  if (little || t.starts_with("\xFE\xFF")) {
    std::string decoded;
    if (!Utf16ToUtf8(t.substr(2), !little, &decoded)) {
      return Status::InvalidInput(source + ": the file is UTF-16 that does not decode" + save);
    }
    *text = std::move(decoded);
    return Status();
  }
  if (t.substr(0, 4).find('\0') != std::string_view::npos) {
    return Status::InvalidInput(source +
                                ": the file has NUL bytes where text starts; it looks "
                                "like UTF-16 without a byte-order mark" +
                                save);
  }
  return Status();
}

Status ReadFile(const std::string& path, std::string* text, int64_t max_bytes,
                std::string_view what, bool raw) {
  text->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::InvalidInput(path + ": cannot read: " + std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    return Status::InvalidInput(path + ": cannot read: Is a directory");
  }
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > max_bytes) {
    ::close(fd);
    return Status::InvalidInput(path + ": " + std::to_string(info.st_size) + " bytes; " +
                                std::string(what) + (what.empty() ? "" : " ") +
                                "files are read up to " + std::to_string(max_bytes) + " bytes");
  }
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      text->clear();
      return Status::InvalidInput(path + ": cannot read: " + std::strerror(error));
    }
    if (n == 0) break;
    if (static_cast<int64_t>(text->size()) + n > max_bytes) {  // a pipe or device that grew
      ::close(fd);
      text->clear();
      return Status::InvalidInput(path + ": more than " + std::to_string(max_bytes) + " bytes; " +
                                  std::string(what) + (what.empty() ? "" : " ") +
                                  "files are read up to " + std::to_string(max_bytes) + " bytes");
    }
    text->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return raw ? Status() : DecodeText(path, text);
}

OutputFile::~OutputFile() {
  if (fd_ < 0) return;
  coded_.reset();
  gzip_.reset();
  file_.reset();
  ::close(fd_);
  std::remove(temporary_.c_str());
}

Status OutputFile::Error(const char* reason) const {
  if (what_.empty()) return Status::InvalidInput(path_ + ": cannot write: " + reason);
  return Status::InvalidInput(what_ + ": cannot write " + Quoted(path_) + ": " + reason);
}

Status OutputFile::Open(std::string_view what, const std::string& path,
                        Compression compression) {
  what_ = std::string(what);
  path_ = path;
  temporary_ = path + ".tmp";
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Error(std::strerror(errno));
  file_ = std::make_unique<google::protobuf::io::FileOutputStream>(fd_);
  google::protobuf::io::ZeroCopyOutputStream* stream = file_.get();
  if (compression == Compression::kByName && Gzipped(path)) {
    google::protobuf::io::GzipOutputStream::Options options;
    options.format = google::protobuf::io::GzipOutputStream::GZIP;
    // Level 1: a trace compresses about 7 to 1 at 3 times the speed of the default level.
    options.compression_level = 1;
    gzip_ = std::make_unique<google::protobuf::io::GzipOutputStream>(file_.get(), options);
    stream = gzip_.get();
  }
  coded_ = std::make_unique<google::protobuf::io::CodedOutputStream>(stream);
  return Status();
}

Status OutputFile::Commit() {
  bool ok = !coded_->HadError();
  coded_.reset();
  if (gzip_ != nullptr) ok = gzip_->Close() && ok;
  gzip_.reset();
  ok = file_->Flush() && ok;
  const int error = file_->GetErrno();
  file_.reset();
  ok = ::close(fd_) == 0 && ok;
  fd_ = -1;
  if (ok && std::rename(temporary_.c_str(), path_.c_str()) == 0) return Status();
  const char* reason = std::strerror(error != 0 ? error : errno);
  std::remove(temporary_.c_str());
  return Error(reason);
}

Status WriteWholeFile(std::string_view what, const std::string& path, std::string_view text) {
  OutputFile file;
  RETURN_IF_ERROR(file.Open(what, path, OutputFile::Compression::kNone));
  file.out()->WriteRaw(text.data(), static_cast<int>(text.size()));
  return file.Commit();
}

}  // namespace ppsim
