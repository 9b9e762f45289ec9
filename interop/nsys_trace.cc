#include "interop/nsys_trace.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <regex>
#include <set>

#include "interop/trace_events.h"

namespace ppsim {
namespace {

constexpr const char* kExpected =
    "expected an Nsight Systems export (nsys export --type sqlite), whole";

// An open export and the queries on it; every error names the file.
class Export {
 public:
  explicit Export(std::string file) : file_(std::move(file)) {}
  ~Export() {
    if (db_ != nullptr) sqlite3_close(db_);
  }
  Export(const Export&) = delete;
  Export& operator=(const Export&) = delete;

  const std::string& file() const { return file_; }

  // Read-only: an input is never modified (no journal replayed, no table created).
  Status Open() {
    if (sqlite3_open_v2(file_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      return Error("opening it");
    }
    return Query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')", "its tables",
                 [this](sqlite3_stmt* row) {
                   tables_.insert(Text(row, 0));
                   return Status();
                 });
  }

  bool Has(const std::string& table) const { return tables_.count(table) > 0; }

  // Runs `sql`, calling `row` for each row until it fails.
  Status Query(const std::string& sql, const std::string& what,
               const std::function<Status(sqlite3_stmt*)>& row) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
      sqlite3_finalize(statement);
      return Error("reading " + what);
    }
    Status status;
    int code = SQLITE_ROW;
    while (status.ok() && (code = sqlite3_step(statement)) == SQLITE_ROW) status = row(statement);
    if (status.ok() && code != SQLITE_DONE) status = Error("reading " + what);
    sqlite3_finalize(statement);
    return status;
  }

  static std::string Text(sqlite3_stmt* row, int column) {
    const unsigned char* text = sqlite3_column_text(row, column);
    return text == nullptr ? "" : reinterpret_cast<const char*>(text);
  }
  static bool Null(sqlite3_stmt* row, int column) {
    return sqlite3_column_type(row, column) == SQLITE_NULL;
  }

 private:
  Status Error(const std::string& doing) const {
    return Status::InvalidInput(
        file_ + ": not a readable SQLite database (" +
        std::string(db_ == nullptr ? "out of memory" : sqlite3_errmsg(db_)) + ", " + doing + "); " +
        kExpected);
  }

  std::string file_;
  sqlite3* db_ = nullptr;
  std::set<std::string> tables_;
};

// An interval in the export's nanoseconds, of process `process` (globalTid or globalPid >> 24:
// the serialized GlobalId's hardware, VM and process ids; its low 24 bits are the thread).
struct Row {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t process = 0;
  int64_t correlation = -1;
  std::string name;
};

struct Rows {
  std::vector<Row> ranges;  // NVTX ranges
  std::vector<Row> gpu;     // kernels, memcpy, memset
  std::vector<Row> launches;
  std::vector<Row> marks;  // NVTX marks and unended ranges: the rank's "MPI Rank N"
};

// The name of an NVTX range without what emit_nvtx appends to op names.
std::string WithoutNvtxSuffix(std::string name) {
  size_t cut = name.size();
  for (std::string_view key : {", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "}) {
    cut = std::min(cut, name.find(key));
  }
  name.resize(cut);
  return name;
}

// "TABLE row N: COLUMN I is not in StringIds" for a name id that names nothing.
Status MissingName(const Export& e, const std::string& table, sqlite3_stmt* row,
                   const std::string& column, int id_column) {
  return Status::InvalidInput(e.file() + ": " + table + " row " +
                              std::to_string(sqlite3_column_int64(row, 0)) + ": " + column + " " +
                              std::to_string(sqlite3_column_int64(row, id_column)) +
                              " is not in StringIds; " + kExpected);
}

// Columns 0..4 of the queries below: rowid, start, end, process, correlation.
Status TakeInterval(const Export& e, const std::string& table, sqlite3_stmt* row, Row* out) {
  out->start_ns = sqlite3_column_int64(row, 1);
  out->end_ns = sqlite3_column_int64(row, 2);
  out->process = sqlite3_column_int64(row, 3) >> 24;
  out->correlation = Export::Null(row, 4) ? -1 : sqlite3_column_int64(row, 4);
  if (out->end_ns < out->start_ns && !Export::Null(row, 2)) {
    return Status::InvalidInput(e.file() + ": " + table + " row " +
                                std::to_string(sqlite3_column_int64(row, 0)) + ": end " +
                                std::to_string(out->end_ns) + " before start " +
                                std::to_string(out->start_ns) + "; " + kExpected);
  }
  return Status();
}

Status ReadNvtx(Export& e, Rows* rows) {
  if (!e.Has("NVTX_EVENTS")) return Status();
  const std::string sql =
      "SELECT N.rowid, N.start, N.end, N.globalTid, NULL, N.eventType, N.text, N.textId, "
      "S.value FROM NVTX_EVENTS N LEFT JOIN StringIds S ON S.id = N.textId ORDER BY N.rowid";
  return e.Query(sql, "NVTX_EVENTS", [&](sqlite3_stmt* row) {
    Row r;
    RETURN_IF_ERROR(TakeInterval(e, "NVTX_EVENTS", row, &r));
    if (!Export::Null(row, 6)) {
      r.name = Export::Text(row, 6);
    } else if (!Export::Null(row, 7)) {
      if (Export::Null(row, 8)) return MissingName(e, "NVTX_EVENTS", row, "textId", 7);
      r.name = Export::Text(row, 8);
    }
    const int64_t type = sqlite3_column_int64(row, 5);
    if (Export::Null(row, 2)) {
      rows->marks.push_back(std::move(r));
    } else if (type == 59 || type == 60) {  // NvtxPushPopRange, NvtxStartEndRange
      r.name = WithoutNvtxSuffix(std::move(r.name));
      rows->ranges.push_back(std::move(r));
    }
    return Status();
  });
}

Status ReadKernels(Export& e, Rows* rows) {
  const std::string table = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!e.Has(table)) return Status();
  const std::string sql =
      "SELECT K.rowid, K.start, K.end, K.globalPid, K.correlationId, K.shortName, S.value, "
      "K.demangledName, D.value FROM " +
      table +
      " K LEFT JOIN StringIds S ON S.id = K.shortName LEFT JOIN StringIds D ON "
      "D.id = K.demangledName ORDER BY K.rowid";
  return e.Query(sql, table, [&](sqlite3_stmt* row) {
    Row r;
    RETURN_IF_ERROR(TakeInterval(e, table, row, &r));
    if (Export::Null(row, 6)) return MissingName(e, table, row, "shortName", 5);
    if (Export::Null(row, 8)) return MissingName(e, table, row, "demangledName", 7);
    r.name = Export::Text(row, 6);
    bool nccl = false;
    TraceCollectiveKind kind;
    NcclKernelKind(r.name, &nccl, &kind);
    if (!nccl) {
      const std::string demangled = Export::Text(row, 8);
      NcclKernelKind(demangled, &nccl, &kind);
      if (nccl) r.name = demangled;
    }
    rows->gpu.push_back(std::move(r));
    return Status();
  });
}

// Memcpy and memset rows (no names needed), and the runtime calls that launched GPU work.
Status ReadCopiesAndLaunches(Export& e, Rows* rows) {
  for (const std::string table : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
    if (!e.Has(table)) continue;
    RETURN_IF_ERROR(e.Query(
        "SELECT rowid, start, end, globalPid, correlationId FROM " + table + " ORDER BY rowid",
        table, [&](sqlite3_stmt* row) {
          Row r;
          RETURN_IF_ERROR(TakeInterval(e, table, row, &r));
          r.name = table.ends_with("MEMCPY") ? "Memcpy" : "Memset";
          rows->gpu.push_back(std::move(r));
          return Status();
        }));
  }
  const std::string table = "CUPTI_ACTIVITY_KIND_RUNTIME";
  if (!e.Has(table)) return Status();
  return e.Query("SELECT rowid, start, end, globalTid, correlationId FROM " + table +
                     " WHERE correlationId IS NOT NULL ORDER BY rowid",
                 table, [&](sqlite3_stmt* row) {
                   Row r;
                   RETURN_IF_ERROR(TakeInterval(e, table, row, &r));
                   rows->launches.push_back(std::move(r));
                   return Status();
                 });
}

// A whole number from 0 to 2^24 in `text`; -1 when it is not one.
int64_t SmallWhole(const std::string& text) {
  if (text.empty() || text.size() > 8 || !std::all_of(text.begin(), text.end(), ::isdigit)) {
    return -1;
  }
  const int64_t value = std::stoll(text);
  return value <= (1 << 24) ? value : -1;
}

// The rank and world size from the environment nsys recorded (see the header), -1 / 0 when it
// does not say.
Status RankFromEnvironment(Export& e, TraceRank* rank) {
  if (!e.Has("TARGET_INFO_SYSTEM_ENV")) return Status();
  std::map<std::string, std::string> env;
  RETURN_IF_ERROR(e.Query(
      "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment' ORDER BY rowid",
      "TARGET_INFO_SYSTEM_ENV", [&](sqlite3_stmt* row) {
        const std::string value = Export::Text(row, 0);
        for (size_t start = 0; start <= value.size();) {  // "K=V;K=V"
          size_t end = value.find(';', start);
          if (end == std::string::npos) end = value.size();
          const std::string pair = value.substr(start, end - start);
          const size_t equals = pair.find('=');
          if (equals != std::string::npos)
            env.emplace(pair.substr(0, equals), pair.substr(equals + 1));
          start = end + 1;
        }
        return Status();
      }));
  static const std::pair<const char*, const char*> kKeys[] = {
      {"RANK", "WORLD_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (const auto& [rank_key, size_key] : kKeys) {
    auto r = env.find(rank_key);
    if (r == env.end()) continue;
    const std::string where = e.file() + ": TARGET_INFO_SYSTEM_ENV DeviceEnvironment ";
    rank->rank = static_cast<int32_t>(SmallWhole(r->second));
    if (rank->rank < 0) {
      return Status::InvalidInput(where + rank_key + "='" + r->second.substr(0, 40) +
                                  "'; expected a whole number from 0 to 16777216");
    }
    auto s = env.find(size_key);
    if (s != env.end()) {
      const int64_t size = SmallWhole(s->second);
      if (size <= rank->rank) {
        return Status::InvalidInput(where + size_key + "='" + s->second.substr(0, 40) + "' with " +
                                    rank_key + "=" + r->second +
                                    "; expected a whole number above the rank");
      }
      rank->world_size = static_cast<int32_t>(size);
    }
    return Status();
  }
  return Status();
}

// The one process whose GPU work and ranges are read; InvalidInput for several.
Status OneProcess(const Export& e, const Rows& rows, int64_t* process) {
  std::set<int64_t> processes;
  for (const auto* list : {&rows.ranges, &rows.gpu}) {
    for (const Row& r : *list) processes.insert(r.process);
  }
  *process = processes.empty() ? -1 : *processes.begin();
  if (processes.size() <= 1) return Status();
  std::string pids;
  for (int64_t p : processes) {
    if (pids.size() < 200) pids += (pids.empty() ? "" : ", ") + std::to_string(p & 0xFFFFFF);
  }
  return Status::InvalidInput(e.file() + ": GPU work or NVTX ranges of " +
                              std::to_string(processes.size()) + " processes (pids " + pids +
                              "); ppsim profile reads one rank per file: run one nsys per rank "
                              "(srun nsys profile ..., or nsys profile inside the launched "
                              "command) and export each");
}

// The rows of `process` into the rank, in seconds from the earliest start.
void Convert(const Rows& rows, int64_t process, TraceRank* rank) {
  auto mine = [process](const Row& r) { return process < 0 || r.process == process; };
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const auto* list : {&rows.ranges, &rows.gpu, &rows.launches}) {
    for (const Row& r : *list) {
      if (mine(r)) origin = std::min(origin, r.start_ns);
    }
  }
  // Differences of nanoseconds, exact below 2^53, then seconds.
  auto seconds = [origin](int64_t ns) { return static_cast<double>(ns - origin) * 1e-9; };
  TraceEvents events;
  for (const Row& r : rows.gpu) {
    if (!mine(r)) continue;
    events.Span(seconds(r.start_ns), seconds(r.end_ns));
    TraceGpuEvent gpu;
    gpu.start_s = seconds(r.start_ns);
    gpu.end_s = seconds(r.end_ns);
    gpu.correlation = r.correlation;
    gpu.name = r.name;
    events.gpu.push_back(std::move(gpu));
  }
  for (const Row& r : rows.launches) {
    if (!mine(r)) continue;
    events.Span(seconds(r.start_ns), seconds(r.end_ns));
    events.launch_s[r.correlation] = seconds(r.start_ns);
  }
  for (const Row& r : rows.ranges) {
    if (!mine(r)) continue;
    events.Span(seconds(r.start_ns), seconds(r.end_ns));
    AddCpuRange(
        r.name, seconds(r.start_ns), seconds(r.end_ns), [] { return int64_t{-1}; }, &events, rank);
  }
  FinishTraceRank(&events, rank);
}

}  // namespace

bool IsSqliteHeader(std::string_view head) {
  return head.starts_with(std::string_view("SQLite format 3\0", 16));
}

Status ReadNsysExport(const std::string& file, TraceRank* rank) {
  *rank = TraceRank();
  rank->file = file;
  rank->rank = -1;
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(file, error);
  if (error) return Status::InvalidInput(file + ": cannot read: " + error.message());
  if (size > static_cast<uintmax_t>(kMaxNsysExportBytes)) {
    return Status::InvalidInput(
        file + ": " + std::to_string(size) + " bytes; Nsight Systems exports are read up to " +
        std::to_string(kMaxNsysExportBytes) + " bytes (profile fewer steps: nsys --capture-range)");
  }
  Export e(file);
  RETURN_IF_ERROR(e.Open());
  if (!e.Has("StringIds")) {
    return Status::InvalidInput(file +
                                ": not an Nsight Systems export (no StringIds table); ppsim "
                                "profile reads the SQLite files of nsys export --type sqlite, and "
                                "PyTorch profiler traces (.json, .json.gz)");
  }
  Rows rows;
  RETURN_IF_ERROR(ReadNvtx(e, &rows));
  RETURN_IF_ERROR(ReadKernels(e, &rows));
  RETURN_IF_ERROR(ReadCopiesAndLaunches(e, &rows));
  int64_t process = -1;
  RETURN_IF_ERROR(OneProcess(e, rows, &process));
  RETURN_IF_ERROR(RankFromEnvironment(e, rank));
  if (rank->rank < 0) {
    static const std::regex kMpiRank(R"(MPI Rank (\d{1,8}))");
    for (const Row& m : rows.marks) {
      std::smatch match;
      if ((process < 0 || m.process == process) && std::regex_match(m.name, match, kMpiRank) &&
          std::stoll(match[1]) <= (1 << 24)) {
        rank->rank = static_cast<int32_t>(std::stoll(match[1]));
        break;
      }
    }
  }
  Convert(rows, process, rank);
  return Status();
}

Status ReadNsysExports(const std::vector<std::string>& files, bool ranks_in_order,
                       ProfilerTrace* trace) {
  static const RankSource kRankSource = {
      "no rank in the environment nsys recorded (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, "
      "SLURM_PROCID) nor an NVTX mark 'MPI Rank N'",
      "run one nsys per rank under the launcher (srun nsys profile ...), or trace MPI "
      "(nsys --trace=mpi)"};
  trace->ranks.clear();
  for (const std::string& file : files) {
    TraceRank rank;
    RETURN_IF_ERROR(ReadNsysExport(file, &rank));
    trace->ranks.push_back(std::move(rank));
  }
  return OrderTraceRanks(ranks_in_order, kRankSource, trace);
}

}  // namespace ppsim
