// The warm workers' pool (batch/process_pool.h): every job answered once with its own output,
// whatever the order they end in; a crash, a timeout and the job a stopped worker still held.
#include "batch/process_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <map>
#include <string>
#include <vector>

namespace ppsim {
namespace {

// Runs jobs 0..n-1 through `pool` and returns what ended, by job.
std::map<size_t, ProcessPool::Finished> RunAll(ProcessPool* pool, size_t n) {
  std::map<size_t, ProcessPool::Finished> ended;
  size_t next = 0;
  while (next < n || !pool->empty()) {
    while (next < n && !pool->full()) {
      EXPECT_TRUE(pool->Start(next++).ok());
    }
    for (ProcessPool::Finished& f : pool->Wait()) {
      EXPECT_EQ(ended.count(f.job), 0u) << "job " << f.job << " answered twice";
      ended[f.job] = std::move(f);
    }
  }
  return ended;
}

TEST(ProcessPool, EveryJobIsAnsweredOnceWithItsOwnOutput) {
  for (int32_t parallel : {1, 2, 3}) {
    // Unequal jobs: later ones end before earlier ones of another worker.
    ProcessPool pool(parallel, 0, [](size_t job) {
      if (job % 3 == 0) ::usleep(20000);
      return "job " + std::to_string(job) + std::string(job * 10000, 'x');
    });
    const std::map<size_t, ProcessPool::Finished> ended = RunAll(&pool, 12);
    ASSERT_EQ(ended.size(), 12u) << parallel;
    for (const auto& [job, f] : ended) {
      EXPECT_TRUE(WIFEXITED(f.wait_status) && WEXITSTATUS(f.wait_status) == 0) << job;
      EXPECT_FALSE(f.timed_out);
      EXPECT_EQ(f.output, "job " + std::to_string(job) + std::string(job * 10000, 'x'));
    }
  }
}

TEST(ProcessPool, ACrashingJobEndsAloneOfItsSignal) {
  ProcessPool pool(2, 0, [](size_t job) {
    if (job == 1) {
      std::signal(SIGSEGV, SIG_DFL);  // die of the signal, also under ASan
      std::raise(SIGSEGV);
    }
    return std::to_string(job);
  });
  const std::map<size_t, ProcessPool::Finished> ended = RunAll(&pool, 6);
  ASSERT_EQ(ended.size(), 6u);
  EXPECT_TRUE(WIFSIGNALED(ended.at(1).wait_status));
  EXPECT_EQ(WTERMSIG(ended.at(1).wait_status), SIGSEGV);
  for (size_t job : {0, 2, 3, 4, 5}) EXPECT_EQ(ended.at(job).output, std::to_string(job));
}

// A worker answers in the order its jobs came, also when a later job's process ends first: here
// job 0's output is whole at once but its pipe stays open 300 ms longer (a process it started
// holds it), while job 1, started meanwhile, ends at once. With one worker the jobs end in order,
// as a sweep at -j 1 reports its points.
TEST(ProcessPool, OneWorkerAnswersInTheOrderItsJobsCame) {
  ProcessPool pool(1, 0, [](size_t job) {
    if (job == 0 && ::fork() == 0) {
      ::usleep(300000);
      ::_exit(0);
    }
    return std::to_string(job);
  });
  ASSERT_TRUE(pool.Start(0).ok());
  ASSERT_TRUE(pool.Start(1).ok());
  std::vector<size_t> order;
  while (!pool.empty()) {
    for (const ProcessPool::Finished& f : pool.Wait()) {
      EXPECT_EQ(f.output, std::to_string(f.job));
      order.push_back(f.job);
    }
  }
  EXPECT_EQ(order, (std::vector<size_t>{0, 1}));
}

// One worker holds two jobs; the first runs past the timeout, which stops the worker: the second
// is handed to a new worker and runs to its end rather than being lost or counted as timed out.
TEST(ProcessPool, TheJobAStoppedWorkerHeldRunsOnAnotherWorker) {
  ProcessPool pool(1, 0.3, [](size_t job) {
    if (job == 0) ::sleep(30);
    return std::string("done ") + std::to_string(job);
  });
  const std::map<size_t, ProcessPool::Finished> ended = RunAll(&pool, 2);
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_TRUE(ended.at(0).timed_out);
  EXPECT_GE(ended.at(0).wall_s, 0.3);
  EXPECT_LT(ended.at(0).wall_s, 10);
  EXPECT_FALSE(ended.at(1).timed_out);
  EXPECT_EQ(ended.at(1).output, "done 1");
}

}  // namespace
}  // namespace ppsim
