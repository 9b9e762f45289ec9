#include "serve/server.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <csignal>
#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/subprocess.h"
#include "models/transformer.h"
#include "platforms/cluster.h"
#include "serve/api.h"

namespace ppsim::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Request = http::request<http::string_body>;
using Handler = ApiResponse (*)(std::string_view, const ApiFolders&);

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// One simulation in its child process, answered once: by the child, the timeout, a newer
// request of the same page, or shutdown.
struct Job {
  Job(asio::io_context& io) : pipe(io), deadline(io) {}
  Subprocess process;
  asio::posix::stream_descriptor pipe;
  asio::steady_timer deadline;
  std::string page;
  std::function<void(const ApiResponse&)> answer;
  bool done = false;
};

class Connection;

class Server {
 public:
  Server(asio::io_context& io, const ServeOptions& options, ApiFolders folders)
      : io_(io), options_(options), folders_(std::move(folders)), acceptor_(io), signals_(io) {}

  Status Listen(std::ostream& log);
  void Stop();
  const ServeOptions& options() const { return options_; }
  const ApiFolders& folders() const { return folders_; }
  bool stopping() const { return stopping_; }
  void ConnectionClosed() { --connections_; }
  // Runs `handler` on `body` in a child; `answer` gets its response.
  void Simulate(Handler handler, std::string body, std::string page,
                std::function<void(const ApiResponse&)> answer);

 private:
  void Accept();
  void Watch(const std::shared_ptr<Job>& job);
  void Finish(const std::shared_ptr<Job>& job, const ApiResponse& response);

  asio::io_context& io_;
  const ServeOptions options_;
  const ApiFolders folders_;
  tcp::acceptor acceptor_;
  asio::signal_set signals_;
  std::vector<std::shared_ptr<Job>> jobs_;
  int32_t connections_ = 0;
  bool stopping_ = false;
  int null_fd_ = -1;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, Server& server) : stream_(std::move(socket)), server_(server) {}
  ~Connection() { server_.ConnectionClosed(); }
  void Start() { ReadHeader(); }
  void Refuse(int status, std::string_view message) {
    Respond(ErrorResponse(status, message), /*close=*/true);
  }

 private:
  void ReadHeader();
  void OnHeader(beast::error_code error);
  void OnBody(beast::error_code error);
  void Dispatch();
  void Respond(const ApiResponse& response, bool close);
  // After a refusal: stop sending, and read what the client still sends (up to a limit, for a
  // while) so that it sees the answer rather than a reset.
  void Drain();

  beast::tcp_stream stream_;
  std::array<char, 1 << 16> discard_{};
  int64_t drained_bytes_ = 0;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Server& server_;
  bool keep_alive_ = false;
};

void Connection::ReadHeader() {
  parser_.emplace();
  parser_->header_limit(kMaxHeaderBytes);
  // The body's limit depends on the route: OnHeader lowers it. (Beast 1.74 compares the length
  // with an unset limit as over it, so a limit is always set.)
  parser_->body_limit(static_cast<uint64_t>(
      std::max(server_.options().max_body_bytes, server_.options().max_upload_bytes)));
  stream_.expires_after(Millis(server_.options().read_timeout_s));
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code e, size_t) {
                            self->OnHeader(e);
                          });
}

void Connection::OnHeader(beast::error_code error) {
  if (error == http::error::header_limit) {
    return Refuse(431, "request header fields too large: at most 8 KiB");
  }
  if (error == http::error::body_limit) return Refuse(413, "request body too large");
  if (error == http::error::bad_content_length) return Refuse(400, "bad Content-Length");
  if (error) {
    // Not HTTP: say so once, then drop the connection (closed or timed out: just drop it).
    if (error != http::error::end_of_stream && error != beast::error::timeout &&
        error != asio::error::eof && error != asio::error::connection_reset) {
      return Refuse(400, "not an HTTP/1.1 request: " + error.message());
    }
    return;
  }
  const bool upload = parser_->get().target().starts_with("/api/upload");
  const int64_t limit =
      upload ? server_.options().max_upload_bytes : server_.options().max_body_bytes;
  const auto length = parser_->content_length();
  if (length && static_cast<int64_t>(*length) > limit) {
    return Refuse(413, "request body of " + std::to_string(*length) + " bytes; at most " +
                           std::to_string(limit) + " here");
  }
  parser_->body_limit(static_cast<uint64_t>(limit));
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code e, size_t) { self->OnBody(e); });
}

void Connection::OnBody(beast::error_code error) {
  if (error == http::error::body_limit) return Refuse(413, "request body too large");
  if (error) return;
  stream_.expires_never();
  Dispatch();
}

bool TargetIs(std::string_view target, std::string_view path) {
  return target == path || (target.starts_with(path) && target[path.size()] == '?');
}

// The value of `key` in the target's query ("/api/upload?name=a.json" -> "a.json"), undecoded.
std::string QueryValue(std::string_view target, std::string_view key) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return "";
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.starts_with(key) && pair.size() > key.size() && pair[key.size()] == '=') {
      return std::string(pair.substr(key.size() + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

ApiResponse PageFile(std::string_view name) {
  const EmbeddedFile* file = FindEmbeddedFile(ExplorerPageFiles(), "page/" + std::string(name));
  if (file == nullptr) return ErrorResponse(404, "not found");
  const std::string type = name.ends_with(".js")    ? "text/javascript; charset=utf-8"
                           : name.ends_with(".css") ? "text/css; charset=utf-8"
                                                    : "text/html; charset=utf-8";
  return {200, type, std::string(file->bytes)};
}

Handler SimulationOf(std::string_view target) {
  if (TargetIs(target, "/api/run")) return &RunApi;
  if (TargetIs(target, "/api/timeline")) return &TimelineApi;
  if (TargetIs(target, "/api/command")) return &CommandApi;
  return nullptr;
}

void Connection::Dispatch() {
  const Request& request = parser_->get();
  keep_alive_ = request.keep_alive();
  const std::string target(request.target());
  const bool get = request.method() == http::verb::get || request.method() == http::verb::head;
  const bool post = request.method() == http::verb::post;
  if (get && (target == "/" || target.starts_with("/?"))) {
    return Respond(PageFile("index.html"), false);
  }
  if (get && (target == "/explorer.js" || target == "/explorer.css")) {
    return Respond(PageFile(target.substr(1)), false);
  }
  if (get && target == "/api/fields") return Respond({200, "application/json", FieldsJson()}, false);
  if (get && target == "/api/health") return Respond({200, "application/json", "{\"ok\": true}"}, false);
  if (post && TargetIs(target, "/api/upload")) {
    return Respond(UploadApi(QueryValue(target, "name"), request.body(), server_.folders()),
                   false);
  }
  const Handler handler = SimulationOf(target);
  if (handler != nullptr && post) {
    const std::string page(request["X-Ppsim-Page"]);
    server_.Simulate(handler, request.body(), page,
                     [self = shared_from_this()](const ApiResponse& r) { self->Respond(r, false); });
    return;
  }
  if (handler != nullptr || target == "/api/upload" || target == "/api/fields") {
    return Respond(ErrorResponse(405, "method not allowed"), false);
  }
  Respond(ErrorResponse(404, "not found: " + target.substr(0, 200)), false);
}

void Connection::Respond(const ApiResponse& api, bool close) {
  auto response = std::make_shared<http::response<http::string_body>>(
      static_cast<http::status>(api.status), 11);
  response->set(http::field::server, "ppsim");
  response->set(http::field::content_type, api.content_type);
  response->set(http::field::cache_control, "no-store");
  response->set("X-Content-Type-Options", "nosniff");
  if (api.status == 429 || api.status == 503) response->set(http::field::retry_after, "1");
  response->body() = api.body;
  const bool keep = keep_alive_ && !close && !server_.stopping();
  response->keep_alive(keep);
  response->prepare_payload();
  stream_.expires_after(Millis(server_.options().read_timeout_s));
  http::async_write(stream_, *response,
                    [self = shared_from_this(), response, keep](beast::error_code e, size_t) {
                      if (e) return;
                      if (!keep) return self->Drain();
                      self->ReadHeader();
                    });
}

void Connection::Drain() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  if (drained_bytes_ == 0) stream_.expires_after(std::chrono::seconds(2));
  stream_.async_read_some(asio::buffer(discard_),
                          [self = shared_from_this()](beast::error_code e, size_t n) {
                            self->drained_bytes_ += static_cast<int64_t>(n) + 1;
                            if (e || self->drained_bytes_ > (int64_t{256} << 20)) return;
                            self->Drain();
                          });
}

Status Server::Listen(std::ostream& log) {
  beast::error_code error;
  const asio::ip::address address = asio::ip::make_address(options_.bind, error);
  if (error) {
    return Status::InvalidInput("--bind: invalid address '" + options_.bind +
                                "'; give an IP address such as 127.0.0.1 or 0.0.0.0");
  }
  const tcp::endpoint endpoint(address, static_cast<uint16_t>(options_.port));
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    return Status::InvalidInput("--port: cannot listen on " + options_.bind + ":" +
                                std::to_string(options_.port) + ": " + error.message() +
                                "; choose another --port (0: any free one)");
  }
  null_fd_ = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.async_wait([this](beast::error_code e, int) {
    if (!e) Stop();
  });
  const tcp::endpoint bound = acceptor_.local_endpoint();
  const std::string host = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                                   : bound.address().to_string();
  log << "ppsim serve: http://" << host << ":" << bound.port() << "/ (Ctrl-C stops)" << std::endl;
  Accept();
  return Status();
}

void Server::Accept() {
  acceptor_.async_accept([this](beast::error_code error, tcp::socket socket) {
    if (stopping_) return;
    if (!error) {
      ++connections_;
      auto connection = std::make_shared<Connection>(std::move(socket), *this);
      if (connections_ > options_.max_connections) {
        connection->Refuse(503, "too many connections; try again");
      } else {
        connection->Start();
      }
    }
    Accept();
  });
}

void Server::Simulate(Handler handler, std::string body, std::string page,
                      std::function<void(const ApiResponse&)> answer) {
  if (stopping_) return answer(ErrorResponse(503, "the server is stopping"));
  if (!page.empty()) {
    for (const std::shared_ptr<Job>& old : std::vector(jobs_)) {
      if (old->page == page) {
        Finish(old, ErrorResponse(409, "cancelled: a newer request from the same page"));
      }
    }
  }
  if (static_cast<int32_t>(jobs_.size()) >= options_.workers) {
    return answer(ErrorResponse(
        429, std::to_string(jobs_.size()) + " simulations running, the most this server runs at "
                                            "once (--workers); try again"));
  }
  auto job = std::make_shared<Job>(io_);
  job->page = std::move(page);
  job->answer = std::move(answer);
  const ApiFolders& folders = folders_;
  const Status started = job->process.Start(
      [handler, &body, &folders] {
        // Test hook: the simulation's process dies as a crash would.
        if (std::getenv("PPSIM_SERVE_CRASH") != nullptr) {
          std::signal(SIGSEGV, SIG_DFL);  // die of the signal, also under ASan (which handles SEGV)
          std::raise(SIGSEGV);
        }
        return SerializeResponse(handler(body, folders));
      },
      /*own_group=*/true, null_fd_);
  if (!started.ok()) return job->answer(ErrorResponse(500, started.message()));
  job->pipe.assign(::dup(job->process.fd()));
  jobs_.push_back(job);
  job->deadline.expires_after(Millis(options_.timeout_s));
  job->deadline.async_wait([this, job](beast::error_code e) {
    if (e) return;
    Finish(job, ErrorResponse(504, "the simulation ran longer than " +
                                       std::to_string(static_cast<int64_t>(options_.timeout_s)) +
                                       " s (--timeout); it was stopped"));
  });
  Watch(job);
}

void Server::Watch(const std::shared_ptr<Job>& job) {
  job->pipe.async_wait(asio::posix::stream_descriptor::wait_read, [this, job](beast::error_code e) {
    if (e || job->done) return;
    if (job->process.Read()) {
      if (static_cast<int64_t>(job->process.output().size()) > options_.max_response_bytes) {
        return Finish(job, ErrorResponse(500, "the answer is larger than the server sends"));
      }
      return Watch(job);
    }
    const int status = job->process.Wait();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return Finish(job, ErrorResponse(500, "the simulation's process ended with " +
                                                DescribeWaitStatus(status)));
    }
    Finish(job, ParseResponse(job->process.output()));
  });
}

void Server::Finish(const std::shared_ptr<Job>& job, const ApiResponse& response) {
  if (job->done) return;
  job->done = true;
  job->deadline.cancel();
  beast::error_code ignored;
  job->pipe.close(ignored);
  if (job->process.running()) job->process.Kill();
  std::erase(jobs_, job);
  job->answer(response);
}

void Server::Stop() {
  if (stopping_) return;
  stopping_ = true;
  beast::error_code ignored;
  acceptor_.close(ignored);
  for (const std::shared_ptr<Job>& job : std::vector(jobs_)) {
    Finish(job, ErrorResponse(503, "the server is stopping"));
  }
  signals_.cancel(ignored);
  // Answers in flight get a moment to leave; then everything stops.
  auto grace = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(300));
  grace->async_wait([this, grace](beast::error_code) { io_.stop(); });
}

// The server's own folder for uploads and scratch files, removed when it stops.
class OwnFolder {
 public:
  Status Make() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/ppsim-serve.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Status::Internal("ppsim serve: cannot make a folder in " + pattern);
    }
    path_ = pattern;
    std::error_code ignored;
    std::filesystem::create_directory(path_ + "/uploads", ignored);
    std::filesystem::create_directory(path_ + "/scratch", ignored);
    return Status();
  }
  ~OwnFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

Status Serve(const ServeOptions& options, std::ostream& log) {
  ::signal(SIGPIPE, SIG_IGN);
  // Warm: what every child would read on first use is read once, here.
  (void)TransformerPresets();
  (void)AllClusterPresets();
  OwnFolder folder;
  RETURN_IF_ERROR(folder.Make());
  asio::io_context io;
  Server server(io, options,
                {folder.path() + "/uploads", folder.path() + "/scratch", options.max_uploads_bytes});
  RETURN_IF_ERROR(server.Listen(log));
  io.run();
  log << "ppsim serve: stopped" << std::endl;
  return Status();
}

}  // namespace ppsim::serve
