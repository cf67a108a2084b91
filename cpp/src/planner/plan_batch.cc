// plan_batch.cc: the thread pool behind plan_many (see plan_batch.hh).
#include "planner/plan_batch.hh"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace simdplan {

uint64_t task_seed(uint64_t seed, uint64_t index) {
  // splitmix64's finalizer over seed + (index + 1) * golden ratio: consecutive indices and seeds
  // land far apart
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (z ^ (z >> 31)) >> 1;
}

PlanBatch::PlanBatch(int32_t workers) {
  const int32_t n = std::max(workers, 1);
  running_ = n;
  try {
    for (int32_t w = 0; w < n; ++w) threads_.emplace_back([this] { work(); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ -= n - int32_t(threads_.size());  // threads that never started will not count themselves out
    }
    stop();
    join();
    throw;
  }
}

PlanBatch::~PlanBatch() {
  stop();
  join();
}

void PlanBatch::add(std::vector<PlanTask> tasks) {
  for (const PlanTask& t : tasks)
    if (t.robot == nullptr || t.env == nullptr || t.planner == nullptr || t.settings == nullptr)
      throw std::invalid_argument("plan batch: a task lacks its robot, environment, planner or settings");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw std::invalid_argument("plan batch: add() after close()");
    for (PlanTask& t : tasks) {
      results_.emplace_back().dof = t.robot->dof();
      tasks_.push_back(std::move(t));
    }
  }
  work_ready_.notify_all();
}

void PlanBatch::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  work_ready_.notify_all();
}

void PlanBatch::work() {
  for (;;) {
    int64_t i;
    PlanTask* t;
    PlanTaskResult* r;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stop_.requested() || closed_ || next_ < int64_t(tasks_.size()); });
      if (stop_.requested() || next_ >= int64_t(tasks_.size())) break;  // stopped, or closed and drained
      i = next_++;
      t = &tasks_[size_t(i)];
      r = &results_[size_t(i)];
    }
    planner::PlannerSettings s = *t->settings;
    s.seed = r->seed = task_seed(s.seed, t->seed_index);
    const int32_t n_goals = int32_t(t->goals.size() / size_t(r->dof > 0 ? r->dof : 1));
    const auto t0 = std::chrono::steady_clock::now();
    try {
      if (t->request != nullptr) {
        r->pose = true;
        r->pose_out = plan_to_poses(*t->robot, *t->env, *t->planner, t->start.data(), *t->request, t->targets,
                                    t->rounds, t->round_iterations, s, &stop_);
        r->out = std::move(r->pose_out.plan);
      } else {
        r->out = plan(*t->robot, *t->env, *t->planner, t->start.data(), t->goals.data(), n_goals, s, &stop_);
      }
    } catch (const std::invalid_argument& e) {
      r->error = e.what(), r->error_is_value = true;
    } catch (const std::domain_error& e) {
      r->error = e.what(), r->error_is_value = true;
    } catch (const std::exception& e) {
      r->error = e.what();
    } catch (...) {
      r->error = "unknown error";
    }
    r->call_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    // the task's problem is no longer needed: a long batch holds only its unreported results
    std::vector<double>().swap(t->start);
    std::vector<double>().swap(t->goals);
    std::vector<std::array<float, 12>>().swap(t->targets);
    if (r->out.stopped == Deadline::Stop::interrupted) break;  // cut short by stop(): not a result
    // PERF: no wake-up per task: the caller polls every few ms anyway (for Ctrl-C), and a wake-up
    // per plan of ~100 us would cost it a context switch each
    std::lock_guard<std::mutex> lock(mutex_);
    finished_.push_back(i);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
  }
  threads_done_.notify_all();
}

std::vector<int64_t> PlanBatch::wait_finished(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  threads_done_.wait_for(lock, wait, [&] { return running_ == 0; });
  std::vector<int64_t> out;
  out.swap(finished_);
  return out;
}

bool PlanBatch::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_ == 0 && finished_.empty();
}

void PlanBatch::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.set.store(true, std::memory_order_relaxed);
  }
  work_ready_.notify_all();
}

void PlanBatch::join() {
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

PlanTaskResult PlanBatch::take(int64_t i) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (i < 0 || i >= int64_t(results_.size())) throw std::out_of_range("plan batch: no task " + std::to_string(i));
  PlanTaskResult out = std::move(results_[size_t(i)]);
  results_[size_t(i)] = PlanTaskResult{};
  return out;
}

}  // namespace simdplan
