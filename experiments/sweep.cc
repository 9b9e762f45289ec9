#include "experiments/sweep.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "experiments/report.h"
#include "experiments/trace_outputs.h"
#include "models/units.h"
#include "base/files.h"

namespace ppsim {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Header(const ExperimentPlan& plan) {
  std::string header = "point";
  for (const std::string& column : plan.columns) header += "," + CsvField(column);
  for (std::string_view column : kResultMetricColumns) header += "," + std::string(column);
  return header;
}

// One line: line breaks in a message become "; ".
std::string OneLine(std::string text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      out += "; ";
    } else {
      out += text[i];
    }
  }
  return out;
}

// What a point came to: the CSV metric fields (empty unless ok) and the run's JSON.
struct Outcome {
  std::string status;
  std::string error;
  std::string metrics_csv;  // makespan_s ... oom (7 fields), ok only
  std::string result_json;  // ok only
  double wall_s = 0;
};

std::string CsvRow(const ExperimentPlan& plan, const SweepPoint& point, const Outcome& o) {
  std::string row = std::to_string(point.index);
  for (const std::string& value : point.values) row += "," + CsvField(value);
  row += "," + (o.metrics_csv.empty() ? std::string(",,,,,,") : o.metrics_csv);
  return row + "," + o.status + "," + CsvField(o.error) + "," + FormatNumber(o.wall_s);
}

std::string JsonLine(const ExperimentPlan& plan, const SweepPoint& point, const Outcome& o) {
  std::string line = "{\"point\": " + std::to_string(point.index) + ", \"values\": {";
  for (size_t c = 0; c < plan.columns.size(); ++c) {
    line += (c ? ", " : "") + JsonString(plan.columns[c]) + ": " + JsonString(point.values[c]);
  }
  line += "}, \"status\": " + JsonString(o.status) + ", \"error\": " + JsonString(o.error) +
          ", \"wall_s\": " + FormatNumber(o.wall_s);
  if (!o.result_json.empty()) line += ", \"result\": " + o.result_json;
  return line + "}";
}

std::string MetricsCsv(const RunResult& r) {
  const RunMetrics& m = r.metrics;
  int64_t peak = 0;
  int64_t static_bytes = 0;
  for (const RankMetrics& k : m.ranks) {
    peak = std::max(peak, k.peak_memory_bytes);
    static_bytes = std::max(static_bytes, k.static_memory_bytes);
  }
  const double microbatches = static_cast<double>(r.num_microbatches) * r.spec.training.dp;
  const double throughput = m.makespan_s > 0 ? microbatches / m.makespan_s : 0;
  return FormatNumber(m.makespan_s) + "," + FormatNumber(m.bubble_over_makespan) + "," +
         FormatNumber(m.stage_bubble_rate) + "," + FormatNumber(throughput) + "," +
         std::to_string(peak) + "," + std::to_string(static_bytes) + "," +
         (m.oom_ranks > 0 ? "true" : "false");
}

// The child's message to the parent: status, wall time, error or metrics, JSON; '\0'-separated.
std::string Serialize(const Outcome& o) {
  return o.status + '\0' + FormatNumber(o.wall_s) + '\0' + o.error + '\0' + o.metrics_csv + '\0' +
         o.result_json;
}

bool Deserialize(const std::string& text, Outcome* o) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (int k = 0; k < 4; ++k) {
    const size_t end = text.find('\0', start);
    if (end == std::string::npos) return false;
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  o->status = parts[0];
  o->wall_s = std::strtod(parts[1].c_str(), nullptr);
  o->error = parts[2];
  o->metrics_csv = parts[3];
  o->result_json = text.substr(start);
  return true;
}

// Runs in the child: simulates one point.
Outcome RunPoint(const PointJob& job, const SweepOptions& options) {
  const char* crash = std::getenv("PPSIM_SWEEP_CRASH_POINT");
  if (crash != nullptr && std::to_string(job.point->index) == crash) std::raise(SIGSEGV);
  Outcome o;
  const Clock::time_point start = Clock::now();
  PreparedRun prepared;
  Status status = PrepareRun(job.spec, &prepared);
  RunResult result;
  Timeline timeline;
  if (status.ok()) status = ExecuteRun(prepared, &result, &timeline);
  if (status.ok() && !options.timelines_dir.empty()) {
    status = WriteTimelinePicture(PointTimelinePath(options, job.point->index), prepared, result,
                                  timeline);
  }
  o.wall_s = Seconds(Clock::now() - start);
  if (!status.ok()) {
    o.status = "failed";
    o.error = OneLine(status.message());
    return o;
  }
  o.status = "ok";
  o.metrics_csv = MetricsCsv(result);
  o.result_json = FormatResultJsonLine(result);
  return o;
}

bool WriteAll(int fd, const std::string& data) {
  const char* p = data.data();
  size_t size = data.size();
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// An append-only journal; every line goes out in one write().
class Journal {
 public:
  ~Journal() {
    if (fd_ >= 0) close(fd_);
  }
  Status Open(const std::string& path) {
    path_ = path;
    fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd_ < 0) return Status::InvalidInput(path + ": cannot write: " + strerror(errno));
    return Status();
  }
  bool Append(const std::string& line) { return WriteAll(fd_, line + "\n"); }

 private:
  std::string path_;
  int fd_ = -1;
};

// Writes `text` to `path` whole: to path.tmp, then renamed over it.
bool ReadLines(const std::string& path, std::vector<std::string>* lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // a torn last line: not finished
    lines->push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return true;
}

int64_t LeadingIndex(const std::string& line, size_t offset) {
  int64_t index = 0;
  bool any = false;
  for (size_t i = offset; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) {
    index = index * 10 + (line[i] - '0');
    any = true;
  }
  return any ? index : -1;
}

int64_t CsvPoint(const std::string& row) { return LeadingIndex(row, 0); }
int64_t JsonPoint(const std::string& line) {
  const std::string key = "{\"point\": ";
  return line.rfind(key, 0) == 0 ? LeadingIndex(line, key.size()) : -1;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// A running point's process.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  size_t job = 0;
  Clock::time_point start;
  std::string data;
};

std::string SignalText(int signal) {
  return "the point's process died of signal " + std::to_string(signal) + " (" +
         strsignal(signal) + ")";
}

}  // namespace

std::string PointTimelinePath(const SweepOptions& options, size_t index) {
  char name[32];
  std::snprintf(name, sizeof(name), "/point-%04zu", index);
  return options.timelines_dir + name + options.timeline_extension;
}

std::string JsonLinesPath(const std::string& csv_path) {
  const std::string suffix = ".csv";
  if (csv_path.size() > suffix.size() &&
      csv_path.compare(csv_path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return csv_path.substr(0, csv_path.size() - suffix.size()) + ".jsonl";
  }
  return csv_path + ".jsonl";
}

Status RunSweep(const ExperimentPlan& plan, const std::vector<PointJob>& jobs,
                const SweepOptions& options, std::ostream& progress, SweepSummary* summary) {
  *summary = SweepSummary();
  const Clock::time_point sweep_start = Clock::now();
  const std::string header = Header(plan);
  const std::string csv_path = options.output;
  const std::string json_path = JsonLinesPath(csv_path);
  const std::string csv_journal = csv_path + ".partial";
  const std::string json_journal = json_path + ".partial";

  // Rows already done: from the journal, or from a finished output.
  std::map<int64_t, std::string> csv_rows;
  std::map<int64_t, std::string> json_rows;
  const bool have_journal = Exists(csv_journal);
  if (have_journal && !options.resume) {
    return Status::InvalidInput(csv_journal + ": an interrupted sweep's results; add --resume "
                                "to continue it, or delete it to start over");
  }
  if (options.resume) {
    const std::string from = have_journal ? csv_journal : csv_path;
    const std::string json_from = have_journal ? json_journal : json_path;
    std::vector<std::string> lines;
    std::vector<std::string> json_lines;
    if (ReadLines(from, &lines) && !lines.empty()) {
      if (lines[0] != header) {
        return Status::InvalidInput(from + ":1: its columns are not this experiment's; start "
                                    "over without --resume (expected: " + header + ")");
      }
      ReadLines(json_from, &json_lines);
      std::map<int64_t, std::string> json_by_point;
      for (const std::string& line : json_lines) json_by_point[JsonPoint(line)] = line;
      for (size_t i = 1; i < lines.size(); ++i) {
        const int64_t point = CsvPoint(lines[i]);
        // Rows without their JSON line are run again.
        if (point < 0 || point >= static_cast<int64_t>(jobs.size()) ||
            json_by_point.count(point) == 0) {
          continue;
        }
        std::string expected = std::to_string(point);
        for (const std::string& value : jobs[point].point->values) expected += "," + CsvField(value);
        if (lines[i].rfind(expected + ",", 0) != 0) {
          return Status::InvalidInput(from + ":" + std::to_string(i + 1) + ": point " +
                                      std::to_string(point) + " is not (" +
                                      DescribePoint(plan, *jobs[point].point) +
                                      ") in this experiment; start over without --resume");
        }
        csv_rows[point] = lines[i];
        json_rows[point] = json_by_point[point];
      }
    }
  }

  // The journal starts as the header and the resumed rows, written whole (a torn last line of an
  // interrupted journal is dropped), then grows a line per finished point.
  {
    std::string csv_text = header + "\n";
    std::string json_text;
    for (const auto& [point, row] : csv_rows) csv_text += row + "\n";
    for (const auto& [point, line] : json_rows) json_text += line + "\n";
    Status status = WriteWholeFile("", json_journal, json_text);
    if (status.ok()) status = WriteWholeFile("", csv_journal, csv_text);
    if (!status.ok()) return status;
  }
  Journal csv_out;
  Journal json_out;
  Status status = csv_out.Open(csv_journal);
  if (status.ok()) status = json_out.Open(json_journal);
  if (!status.ok()) return status;

  std::vector<size_t> todo;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (static_cast<int32_t>(j % options.shard_count) != options.shard_index) continue;
    ++summary->points;
    if (csv_rows.count(static_cast<int64_t>(j))) {
      ++summary->resumed;
      continue;
    }
    todo.push_back(j);
  }
  const size_t total = summary->points;
  size_t done = summary->resumed;
  size_t journaled = 0;
  const char* kill_after_env = std::getenv("PPSIM_SWEEP_KILL_AFTER");
  const long kill_after = kill_after_env == nullptr ? -1 : std::strtol(kill_after_env, nullptr, 10);

  auto record = [&](size_t j, const Outcome& o) {
    const SweepPoint& point = *jobs[j].point;
    const std::string row = CsvRow(plan, point, o);
    const std::string line = JsonLine(plan, point, o);
    csv_out.Append(row);
    json_out.Append(line);
    csv_rows[point.index] = row;
    json_rows[point.index] = line;
    ++done;
    ++journaled;
    if (o.status == "ok") {
      ++summary->ok;
    } else if (o.status == "skipped") {
      ++summary->skipped;
    } else {
      ++summary->failed;
    }
    const double elapsed = Seconds(Clock::now() - sweep_start);
    const size_t ran = done - summary->resumed;
    const double eta = ran > 0 ? elapsed / ran * (total - done) : 0;
    if (options.terminal) {
      char line_text[160];
      std::snprintf(line_text, sizeof(line_text), "\r%zu/%zu points, %zu failed, ETA %s   ", done,
                    total, summary->failed, HumanDuration(eta).c_str());
      progress << line_text << std::flush;
    } else {
      progress << "[" << done << "/" << total << "] point " << point.index << " " << o.status
               << " (" << DescribePoint(plan, point) << ")"
               << (o.error.empty() ? "" : ": " + o.error) << "\n";
    }
    if (kill_after >= 0 && static_cast<long>(journaled) >= kill_after) raise(SIGKILL);
  };

  // Skipped points need no process.
  std::vector<size_t> runnable;
  for (size_t j : todo) {
    if (jobs[j].skipped) {
      Outcome o;
      o.status = "skipped";
      o.error = OneLine(jobs[j].reason);
      record(j, o);
    } else {
      runnable.push_back(j);
    }
  }

  std::fflush(stdout);
  std::fflush(stderr);
  progress.flush();
  std::vector<Child> running;
  size_t next = 0;
  const int32_t parallel = std::max(1, options.jobs);
  while (next < runnable.size() || !running.empty()) {
    while (next < runnable.size() && static_cast<int32_t>(running.size()) < parallel) {
      int fds[2];
      if (pipe(fds) != 0) return Status::Internal(std::string("sweep: pipe: ") + strerror(errno));
      const size_t j = runnable[next++];
      const pid_t pid = fork();
      if (pid < 0) return Status::Internal(std::string("sweep: fork: ") + strerror(errno));
      if (pid == 0) {
        // Its own process group, so that a timeout also stops the simulation it forks.
        setpgid(0, 0);
        close(fds[0]);
        for (const Child& c : running) close(c.fd);
        const bool sent = WriteAll(fds[1], Serialize(RunPoint(jobs[j], options)));
        _exit(sent ? 0 : 4);
      }
      setpgid(pid, pid);
      close(fds[1]);
      running.push_back({pid, fds[0], j, Clock::now(), ""});
    }
    std::vector<pollfd> fds;
    for (const Child& c : running) fds.push_back({c.fd, POLLIN, 0});
    int wait_ms = 200;
    if (options.point_timeout_s > 0) {
      for (const Child& c : running) {
        const double left = options.point_timeout_s - Seconds(Clock::now() - c.start);
        wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(left * 1000) + 1));
      }
    }
    poll(fds.data(), fds.size(), wait_ms);
    for (size_t k = 0; k < running.size();) {
      Child& c = running[k];
      bool finished = false;
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[65536];
        const ssize_t n = read(c.fd, buffer, sizeof(buffer));
        if (n > 0) {
          c.data.append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          finished = true;
        }
      }
      Outcome o;
      if (!finished && options.point_timeout_s > 0 &&
          Seconds(Clock::now() - c.start) > options.point_timeout_s) {
        kill(-c.pid, SIGKILL);
        kill(c.pid, SIGKILL);
        o.status = "timeout";
        o.error = "exceeded --point-timeout " + HumanDuration(options.point_timeout_s);
        finished = true;
      }
      if (!finished) {
        ++k;
        continue;
      }
      int wait_status = 0;
      while (waitpid(c.pid, &wait_status, 0) < 0 && errno == EINTR) {
      }
      close(c.fd);
      const double wall = Seconds(Clock::now() - c.start);
      if (o.status.empty()) {
        if (WIFSIGNALED(wait_status)) {
          o.status = "crashed";
          o.error = SignalText(WTERMSIG(wait_status));
          o.wall_s = wall;
        } else if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0 ||
                   !Deserialize(c.data, &o)) {
          o = Outcome();
          o.status = "crashed";
          o.error = "the point's process exited with status " +
                    std::to_string(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
          o.wall_s = wall;
        }
      } else {
        o.wall_s = wall;
      }
      record(c.job, o);
      fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(k));
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  if (options.terminal) progress << "\n";

  // The final files, in point order, replace the journal.
  std::string csv_text = header + "\n";
  std::string json_text;
  for (const auto& [point, row] : csv_rows) {
    if (static_cast<int32_t>(point % options.shard_count) != options.shard_index) continue;
    csv_text += row + "\n";
    json_text += json_rows[point] + "\n";
  }
  status = WriteWholeFile("", csv_path, csv_text);
  if (status.ok()) status = WriteWholeFile("", json_path, json_text);
  if (!status.ok()) return status;
  std::remove(csv_journal.c_str());
  std::remove(json_journal.c_str());
  summary->wall_s = Seconds(Clock::now() - sweep_start);
  return Status();
}

Status MergeResults(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) return Status::InvalidInput("ppsim merge: no input files");
  const bool json = JsonLinesPath(output) == output + ".jsonl" &&
                    output.size() >= 6 && output.compare(output.size() - 6, 6, ".jsonl") == 0;
  std::string header;
  std::map<int64_t, std::string> rows;
  std::map<int64_t, std::string> from;
  for (const std::string& input : inputs) {
    std::vector<std::string> lines;
    if (!ReadLines(input, &lines)) {
      return Status::InvalidInput(input + ": cannot read: " + strerror(errno));
    }
    size_t first = 0;
    if (!json) {
      if (lines.empty()) return Status::InvalidInput(input + ": empty; expected a results CSV");
      if (header.empty()) header = lines[0];
      if (lines[0] != header) {
        return Status::InvalidInput(input + ":1: its columns differ from " + inputs[0] +
                                    "'s; merge shards of one experiment");
      }
      first = 1;
    }
    for (size_t i = first; i < lines.size(); ++i) {
      const int64_t point = json ? JsonPoint(lines[i]) : CsvPoint(lines[i]);
      if (point < 0) {
        return Status::InvalidInput(input + ":" + std::to_string(i + 1) +
                                    ": not a result line (it should start with the point)");
      }
      if (rows.count(point)) {
        return Status::InvalidInput(input + ":" + std::to_string(i + 1) + ": point " +
                                    std::to_string(point) + " is also in " + from[point]);
      }
      rows[point] = lines[i];
      from[point] = input;
    }
  }
  std::string missing;
  int64_t expected = 0;
  int missing_count = 0;
  for (const auto& [point, row] : rows) {
    for (; expected < point; ++expected) {
      if (++missing_count <= 10) missing += (missing.empty() ? "" : ", ") + std::to_string(expected);
    }
    expected = point + 1;
  }
  if (missing_count > 0) {
    return Status::InvalidInput("ppsim merge: point" + std::string(missing_count > 1 ? "s " : " ") +
                                missing + (missing_count > 10 ? ", ..." : "") +
                                " missing; give every shard's output");
  }
  std::string text = json ? "" : header + "\n";
  for (const auto& [point, row] : rows) text += row + "\n";
  return WriteWholeFile("", output, text);
}

}  // namespace ppsim
