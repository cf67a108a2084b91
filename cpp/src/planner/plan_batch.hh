// plan_batch.hh: many plans on a pool of threads, each thread with its own planner state; the
// robots and environments are shared, read-only.
//
// The calling thread does not plan: it adds tasks and collects finished ones (wait_finished), so
// results stream out as they finish and the caller stays free to notice Ctrl-C. Results are kept
// per task index, so their order never depends on the number of threads.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "planner/planning.hh"
#include "planner/pose_planning.hh"

namespace simdplan {

// The seed task `index` of a batch plans with: a mix of the batch's seed and the index, so tasks
// draw unrelated samples and any task can be re-planned alone with plan(..., seed=task_seed(s, i)).
// In [0, 2^63), the range of PlannerSettings::seed that Python accepts.
uint64_t task_seed(uint64_t seed, uint64_t index);

// One problem of a batch. robot, env, planner and settings are borrowed and must outlive the batch;
// it plans with seed task_seed(settings.seed, seed_index) (the caller's numbering of its tasks,
// which may skip tasks it refused itself).
struct PlanTask {
  const RobotModel* robot = nullptr;
  const Environment* env = nullptr;
  const std::string* planner = nullptr;
  const planner::PlannerSettings* settings = nullptr;
  std::vector<double> start;  // dof
  std::vector<double> goals;  // n_goals x dof (none for a pose task)
  uint64_t seed_index = 0;
  // A pose task (request set, borrowed like the robot): plan_to_poses to `targets` instead of goals.
  const IkRequest* request = nullptr;
  std::vector<std::array<float, 12>> targets;
  int32_t rounds = 1;
  int64_t round_iterations = 1;
};

struct PlanTaskResult {
  PlanOutput out;
  std::string error;            // non-empty: plan() threw this (the task has no output)
  bool error_is_value = false;  // the error was bad input (std::invalid_argument, std::domain_error)
  int64_t call_ns = 0;          // the whole plan() call on its worker, checks included
  uint64_t seed = 0;            // the seed the task planned with
  int32_t dof = 0;              // the robot's (the path's row length)
  bool pose = false;            // a pose task: pose_out holds its goals and IK figures (its plan is in out)
  PosePlanOutput pose_out;
};

// Tasks are added while the threads already plan the first ones (add), so a caller that prepares
// tasks one by one overlaps its work with planning; close() says no more will come.
class PlanBatch {
 public:
  // Starts `workers` (>= 1) threads; they take tasks in index order as they arrive.
  explicit PlanBatch(int32_t workers);
  // Stops the batch (see stop) and joins the threads.
  ~PlanBatch();
  PlanBatch(const PlanBatch&) = delete;
  PlanBatch& operator=(const PlanBatch&) = delete;

  // Appends tasks (indices continue from the last add); invalid_argument for a task without its
  // robot, environment, planner or settings, or after close().
  void add(std::vector<PlanTask> tasks);
  // No more tasks: threads end once the queue is empty.
  void close();
  // Indices of tasks finished since the last call, in the order they finished, after waiting
  // `wait` or until the last thread ends. Empty once every task is reported (see done()).
  std::vector<int64_t> wait_finished(std::chrono::milliseconds wait);
  // True when every thread has ended and every finished task was reported by wait_finished.
  bool done() const;
  // Tasks not yet started are never started; running ones stop at their next deadline poll (their
  // plans end with Deadline::Stop::interrupted and are not reported as finished).
  void stop();
  // Waits for the threads to end (after close() and the last task, or after stop()).
  void join();
  // Moves out the result of a task wait_finished reported (once per task).
  PlanTaskResult take(int64_t i);

 private:
  // the workers' Interrupt: set by stop(), polled by each plan's Deadline
  struct StopFlag final : Interrupt {
    std::atomic<bool> set{false};
    bool requested() override { return set.load(std::memory_order_relaxed); }
  };

  void work();

  // deques: a worker keeps a pointer to its task and result while add() appends
  std::deque<PlanTask> tasks_;
  std::deque<PlanTaskResult> results_;
  StopFlag stop_;
  mutable std::mutex mutex_;  // guards everything below and the deques' structure
  std::condition_variable work_ready_;  // a task was added, or close() / stop()
  std::condition_variable threads_done_;
  int64_t next_ = 0;  // the next task to start
  bool closed_ = false;
  std::vector<int64_t> finished_;  // finished, not yet reported
  int32_t running_ = 0;            // threads still working
  std::vector<std::thread> threads_;
};

}  // namespace simdplan
