#!/usr/bin/env python3
"""`ppsim serve` from the outside: the API against the command line, load, hostile input, slow
clients, cancellation, timeouts, a crashing simulation and a graceful stop. Every request must be
answered or refused cleanly, and the server must be alive afterwards.

  serve_test.py PPSIM        exit 0 ok, 1 a check failed
"""
import concurrent.futures
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PPSIM = os.path.abspath(sys.argv[1])
FAILURES = []

# A small run with a closed form: 1F1B on the ideal platform (no link costs), makespan
# (m + p - 1)(f + b) = (8 + 3) x 3 ms = 33 ms.
SMALL = {"schedule": "1F1B", "pp": 4, "microbatches": 8, "f": "1ms", "b": "2ms",
         "platform": "ideal"}
SMALL_FLAGS = ["--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--f", "1ms", "--b",
               "2ms", "--platform", "ideal"]
# A run of several seconds, for cancellation, timeouts and stops.
SLOW = {"schedule": "1F1B", "pp": 128, "microbatches": 8192, "f": "1ms", "b": "2ms",
        "platform": "ideal"}


def check(condition, what):
    if not condition:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)


class Server:
    def __init__(self, *flags, env=None):
        self.tmp = tempfile.mkdtemp(prefix="serve-test.")
        environment = dict(os.environ, TMPDIR=self.tmp, **(env or {}))
        self.process = subprocess.Popen([PPSIM, "serve", "--port", "0", *flags],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=environment)
        line = self.process.stdout.readline().strip()
        match = re.fullmatch(r"ppsim serve: http://127\.0\.0\.1:(\d+)/ \(Ctrl-C stops\)", line)
        if not match:
            raise SystemExit("serve did not start: %r %s" % (line, self.process.stderr.read()))
        self.port = int(match.group(1))

    def request(self, method, path, body=None, headers=None, timeout=60):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        connection.request(method, path, body=data, headers=headers or {})
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        connection.close()
        return response.status, text

    def alive(self):
        try:
            status, text = self.request("GET", "/api/health", timeout=10)
            return status == 200 and json.loads(text) == {"ok": True}
        except OSError:
            return False

    def stop(self, sig=signal.SIGTERM):
        self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = None
        return code


def raw(port, data, read=True, timeout=10):
    """Sends bytes as they are; returns what comes back until the server closes (or b"")."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        if not read:
            return s
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        if read:
            s.close()


def status_of(answer):
    match = re.match(rb"HTTP/1\.1 (\d+)", answer)
    return int(match.group(1)) if match else None


def cli(*args):
    return subprocess.run([PPSIM, *args], capture_output=True, text=True)


def test_api_is_the_command_line(server):
    status, text = server.request("POST", "/api/run", SMALL)
    check(status == 200, "a small run answers 200, got %s: %s" % (status, text[:200]))
    ran = cli("run", *SMALL_FLAGS, "--format", "json")
    check(text == ran.stdout, "/api/run answers exactly what ppsim run --format json prints")
    check(abs(json.loads(text)["makespan_s"] - 0.033) < 1e-12,
          "1F1B on the ideal platform takes (m + p - 1)(f + b) = 33 ms")
    # Two schedules: the array ppsim run prints for a comma list.
    both = dict(SMALL, schedule="1F1B,GPipe")
    status, text = server.request("POST", "/api/run", both)
    ran = cli("run", *[w if w != "1F1B" else "1F1B,GPipe" for w in SMALL_FLAGS], "--format", "json")
    check(status == 200 and text == ran.stdout, "a comma list answers the CLI's JSON array")
    # Bad input: the command line's message, located in the body.
    status, text = server.request("POST", "/api/run", dict(SMALL, pp=0))
    flags = ["0" if w == "4" else w for w in SMALL_FLAGS]
    message = cli("run", *flags).stderr.strip()
    check(message.startswith("--pp: "), "the CLI names --pp: %r" % message)
    error = json.loads(text)["error"] if status == 400 else ""
    check(status == 400 and re.fullmatch(r"request:1:\d+: pp: " + re.escape(message[6:]), error),
          "pp 0 gets 400 with the CLI's message at pp: %s %r" % (status, error))
    status, text = server.request("POST", "/api/run", dict(SMALL, microbatch=8))
    check(status == 400 and "did you mean microbatches" in text, "an unknown field: did you mean")


def test_command_and_timeline(server):
    # "Copy as ppsim run" gives the command line that prints the same JSON; the timeline is the
    # picture that command draws with --timeline.
    status, text = server.request("POST", "/api/command", SMALL)
    check(status == 200, "/api/command answers 200, got %s %s" % (status, text[:200]))
    commands = json.loads(text)
    words = commands["ppsim"].split()
    check(words[:2] == ["ppsim", "run"], "a ppsim run command: %r" % commands["ppsim"])
    ran = cli(*words[1:], "--format", "json")
    _, direct = server.request("POST", "/api/run", SMALL)
    check(ran.stdout == direct, "the copied command prints what /api/run answers")
    check("error" in commands["megatron"] and "error" in commands["torchtitan"],
          "no framework launch without a model: %r" % commands)
    model = dict(SMALL, model="llama3-8b", platform="h100-node")
    del model["f"], model["b"]
    status, text = server.request("POST", "/api/command", model)
    commands = json.loads(text)
    check(status == 200 and "--pipeline-model-parallel-size 4" in commands["megatron"]["text"]
          and "pipeline_parallel_degree = 4" in commands["torchtitan"]["text"],
          "Megatron-LM arguments and torchtitan TOML of a model's run: %s" % text[:300])
    status, html = server.request("POST", "/api/timeline", SMALL)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "t.html")
        cli(*words[1:], "--timeline", path)
        with open(path) as f:
            drawn = f.read()
    check(status == 200 and html == drawn, "/api/timeline is the picture --timeline draws")


def test_files(server):
    for body, words in [
        (dict(SMALL, profile="/etc/passwd"), "profile: the server reads no files"),
        (dict(SMALL, platform="/etc/passwd"), "platform: the server reads no files; give a preset"),
        (dict(SMALL, platform="upload:../../etc/passwd"), "no upload '../../etc/passwd'"),
        (dict(SMALL, timeline="/tmp/x.html"), "timeline: the server writes no files"),
        (dict(SMALL, megatron="@/etc/passwd"), "megatron: the server reads no files"),
        (dict(SMALL, torchtitan="job.toml"), "torchtitan: the server reads no files"),
        (dict(SMALL, format="csv"), "format: the server answers JSON"),
    ]:
        status, text = server.request("POST", "/api/run", body)
        check(status == 400 and words in text, "%s -> 400 %r, got %s %s" % (body, words, status, text))
    for name in ["../x", ".hidden", "a/b", "", "x" * 101]:
        status, text = server.request("POST", "/api/upload?name=" + name, b"1")
        check(status == 400, "upload name %r refused, got %s" % (name, status))
    for path in ["/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/explorer.js/../../x",
                 "/api/../../etc/passwd", "/page/index.html"]:
        status, _ = server.request("GET", path)
        check(status == 404, "GET %s -> 404, got %s" % (path, status))
    # An uploaded profile is read: a profile of 4 stages of F 1 ms and B 2 ms is the run above.
    profile = "stage,f_ms,b_ms\n0,1,2\n1,1,2\n2,1,2\n3,1,2\n"
    status, text = server.request("POST", "/api/upload?name=p.csv", profile)
    check(status == 200 and json.loads(text)["field_value"] == "upload:p.csv", "upload accepted")
    body = {k: v for k, v in SMALL.items() if k not in ("f", "b")}
    body["profile"] = "upload:p.csv"
    status, text = server.request("POST", "/api/run", body)
    check(status == 200 and abs(json.loads(text)["makespan_s"] - 0.033) < 1e-12,
          "a run from an uploaded profile: 33 ms, got %s %s" % (status, text[:300]))


def test_upload_limit():
    # The uploads together stay within --max-uploads 1MiB: a second 600 KiB file is refused, the
    # first replaced is not (a file replaced counts once).
    server = Server("--max-uploads", "1MiB")
    body = b"x" * (600 << 10)
    status, _ = server.request("POST", "/api/upload?name=a.csv", body)
    check(status == 200, "a 600 KiB upload within 1 MiB")
    status, text = server.request("POST", "/api/upload?name=b.csv", body)
    check(status == 413 and "--max-uploads" in text, "a second 600 KiB upload: 413, got %s %s" %
          (status, text))
    status, _ = server.request("POST", "/api/upload?name=a.csv", body)
    check(status == 200, "replacing the first upload counts it once")
    check(server.stop() == 0, "stops after uploads")


def test_hostile(server):
    port = server.port
    check(status_of(raw(port, b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{\"a\":")) == 400,
          "a torn JSON body gets 400")
    nested = b"[" * 100000 + b"]" * 100000
    answer = raw(port, b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(nested) + nested)
    check(status_of(answer) == 400, "100,000 nested lists get 400")
    check(status_of(raw(port, b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n[1, 2, 3]")) == 400,
          "a JSON array body gets 400")
    check(status_of(raw(port, b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n\xff\xfe\x00\x01")) == 400,
          "binary bytes get 400")
    big = b"{\"schedule\": \"" + b"x" * (2 << 20) + b"\"}"
    check(status_of(raw(port, b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(big) + big)) == 413,
          "a 2 MiB run body gets 413")
    check(status_of(raw(port, b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n")) == 413,
          "a huge Content-Length gets 413 before any body")
    chunked = b"POST /api/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + \
        b"".join(b"100000\r\n" + b"a" * 0x100000 + b"\r\n" for _ in range(3)) + b"0\r\n\r\n"
    check(status_of(raw(port, chunked)) == 413, "a 3 MiB chunked body gets 413")
    header = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (16 << 10) + b"\r\n\r\n"
    check(status_of(raw(port, header)) == 431, "a 16 KiB header gets 431")
    raw(port, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(200))  # a TLS hello
    raw(port, b"GARBAGE\r\n\r\n")
    status, _ = server.request("GET", "/api/run")
    check(status == 405, "GET /api/run -> 405")
    status, _ = server.request("DELETE", "/")
    check(status in (404, 405), "DELETE / refused")
    check(server.alive(), "alive after hostile input")


def test_slow_client(server):
    # Half a request, then nothing: dropped after --read-timeout (1 s) while others are served.
    s = raw(server.port, b"POST /api/run HTTP/1.1\r\nHost: x\r\n", read=False)
    start = time.monotonic()
    status, _ = server.request("POST", "/api/run", SMALL)
    check(status == 200, "served beside a stalled client")
    s.settimeout(10)
    try:
        closed = s.recv(1) == b""
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        closed = False
    s.close()
    check(closed and time.monotonic() - start < 5, "the stalled client was dropped")
    # A body trickling slower than the read timeout: dropped too.
    s = raw(server.port, b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{", read=False)
    time.sleep(1.5)
    try:
        s.sendall(b"a")
        s.settimeout(5)
        dropped = s.recv(1) == b""
    except (BrokenPipeError, ConnectionResetError):
        dropped = True
    s.close()
    check(dropped, "a trickling body was dropped")
    check(server.alive(), "alive after slow clients")


def test_load():
    # 60 requests at once on 2 workers: each answered 200 or refused 429, none lost.
    server = Server("--workers", "2")
    def one(k):
        try:
            return server.request("POST", "/api/run", dict(SMALL, microbatches=8 + k % 5),
                                  headers={"X-Ppsim-Page": "load-%d" % k})[0]
        except OSError as e:
            return str(e)
    with concurrent.futures.ThreadPoolExecutor(60) as pool:
        statuses = list(pool.map(one, range(60)))
    check(all(s in (200, 429) for s in statuses), "60 at once: 200 or 429 each: %s" % statuses)
    check(statuses.count(200) >= 2, "at least the two workers' answers: %s" % statuses)
    check(server.alive(), "alive after load")
    check(server.stop() == 0, "stops after load")


def test_connection_limit(server):
    # Many connections beyond the limit (8): refused 503, never hung.
    sockets = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(8)]
    time.sleep(0.2)
    answer = raw(server.port, b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
    check(status_of(answer) == 503, "the 9th connection gets 503, got %r" % answer[:40])
    for s in sockets:
        s.close()
    time.sleep(0.2)
    check(server.alive(), "alive after load")


def test_cancel_and_timeout(server):
    results = {}

    def slow():
        results["old"] = server.request("POST", "/api/run", SLOW, headers={"X-Ppsim-Page": "p1"})
    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.5)
    results["new"] = server.request("POST", "/api/run", SMALL, headers={"X-Ppsim-Page": "p1"})
    thread.join()
    check(results["old"][0] == 409 and "cancelled" in results["old"][1],
          "the older request of a page is cancelled: %s" % (results["old"],))
    check(results["new"][0] == 200, "the newer one answers")
    start = time.monotonic()
    status, text = server.request("POST", "/api/run", SLOW)
    check(status == 504 and "--timeout" in text and time.monotonic() - start < 5,
          "a run past --timeout 2s gets 504: %s %s" % (status, text))
    check(server.alive(), "alive after cancellations and timeouts")


def test_crash():
    server = Server("--workers", "1", env={"PPSIM_SERVE_CRASH": "1"})
    status, text = server.request("POST", "/api/run", SMALL)
    check(status == 500 and "signal 11" in text, "a crashing simulation: 500, got %s %s" % (status, text))
    check(server.alive(), "alive after a crash")
    check(server.stop() == 0, "stops after a crash")


def test_stop(sig):
    server = Server()
    results = {}

    def slow():
        results["answer"] = server.request("POST", "/api/run", SLOW)
    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.5)
    start = time.monotonic()
    code = server.stop(sig)
    thread.join()
    check(code == 0 and time.monotonic() - start < 5, "%s stops it with 0, got %s" % (sig, code))
    check(results["answer"][0] == 503, "the run in flight is answered 503: %s" % (results["answer"],))
    check(os.listdir(server.tmp) == [], "its folder is removed: %s" % os.listdir(server.tmp))
    check("ppsim serve: stopped" in server.process.stdout.read(), "it says it stopped")


def test_flags():
    for flags, words in [(["--port", "70000"], "--port: must be at most 65535"),
                         (["--bind", "nowhere"], "--bind: invalid address 'nowhere'"),
                         (["--workers", "0"], "-workers: must be at least 1"),
                         (["--timeout", "0s"], "--timeout: must be more than 0 s")]:
        ran = cli("serve", *flags)
        check(ran.returncode == 2 and words in ran.stderr, "%s: exit 2 %r, got %s %r" %
              (flags, words, ran.returncode, ran.stderr))
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ran = cli("serve", "--port", str(taken.getsockname()[1]))
    check(ran.returncode == 2 and "--port: cannot listen on 127.0.0.1:" in ran.stderr,
          "a port in use: exit 2, got %s %r" % (ran.returncode, ran.stderr))
    taken.close()


def main():
    server = Server("--workers", "2", "--read-timeout", "1s", "--timeout", "2s",
                    "--max-connections", "8")
    try:
        test_api_is_the_command_line(server)
        test_command_and_timeline(server)
        test_files(server)
        test_hostile(server)
        test_slow_client(server)
        test_connection_limit(server)
        test_cancel_and_timeout(server)
        check(server.stop(signal.SIGINT) == 0, "SIGINT stops it with 0")
    finally:
        if server.process.poll() is None:
            server.process.kill()
    test_load()
    test_upload_limit()
    test_crash()
    test_stop(signal.SIGTERM)
    test_flags()
    print("serve_test: %d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
