#include "interop/read_traces.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "interop/kineto_trace.h"
#include "interop/nsys_trace.h"

namespace ppsim {

Status ListTraceFiles(const std::vector<std::string>& inputs, std::vector<std::string>* files) {
  namespace fs = std::filesystem;
  files->clear();
  for (const std::string& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      std::vector<std::string> found;
      for (const fs::directory_entry& entry : fs::directory_iterator(input, error)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() &&
            (name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".sqlite"))) {
          found.push_back(entry.path().string());
        }
      }
      if (error) return Status::InvalidInput(input + ": cannot list: " + error.message());
      if (found.empty()) {
        return Status::InvalidInput(input +
                                    ": no trace files; expected *.json or *.json.gz "
                                    "(torch.profiler's *.pt.trace.json[.gz]) or *.sqlite (nsys "
                                    "export --type sqlite) in the folder");
      }
      std::sort(found.begin(), found.end());
      files->insert(files->end(), found.begin(), found.end());
    } else if (fs::exists(input, error)) {
      files->push_back(input);
    } else {
      return Status::InvalidInput(input +
                                  ": no such file or folder; expected trace files "
                                  "(.json, .json.gz, .sqlite) or a folder of them");
    }
  }
  for (size_t i = 0; i < files->size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      std::error_code error;
      if (fs::equivalent((*files)[i], (*files)[j], error)) {
        return Status::InvalidInput((*files)[i] + ": given twice (also as " + (*files)[j] +
                                    "); give each rank's trace once");
      }
    }
  }
  return Status();
}

namespace {

// Whether `file` starts with SQLite's header (an unreadable file is not: its reader says why).
bool IsSqliteFile(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof(head));
  return in.gcount() == sizeof(head) && IsSqliteHeader(std::string_view(head, sizeof(head)));
}

}  // namespace

Status ReadProfilerTraces(const std::vector<std::string>& files, bool ranks_in_order,
                          ProfilerTrace* trace) {
  const std::string* nsys = nullptr;
  const std::string* kineto = nullptr;
  for (const std::string& file : files) {
    (IsSqliteFile(file) ? nsys : kineto) = &file;
  }
  if (nsys != nullptr && kineto != nullptr) {
    // The later file is named: the one that breaks the kind the earlier ones set.
    const bool nsys_later = nsys > kineto;
    return Status::InvalidInput(
        (nsys_later
             ? *nsys + ": an Nsight Systems export, but " + *kineto + " is a PyTorch profiler trace"
             : *kineto + ": a PyTorch profiler trace, but " + *nsys +
                   " is an Nsight Systems export") +
        "; give the traces of one profiler (their clocks and rank records differ)");
  }
  if (nsys != nullptr) return ReadNsysExports(files, ranks_in_order, trace);
  return ReadKinetoTraces(files, ranks_in_order, trace);
}

}  // namespace ppsim
