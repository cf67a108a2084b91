// simdplan/deadline.hh: when a long call must stop early: its time limit passed, or the caller
// asked it to stop (an Interrupt, e.g. Ctrl-C pending in Python). ISA-neutral, no kernel code.
//
// One Deadline covers a whole call (e.g. planning, simplification, interpolation), so the call returns
// within its time limit plus the time of the step in progress. Loops ask passed() every few steps;
// a reading costs one clock read (tens of ns) and, at most every kPollInterval, one poll of the
// Interrupt. Once passed() is true it stays true without reading the clock again.
// Not thread-safe: one Deadline per call and thread.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>

namespace simdplan {

// Asked by a Deadline whether its caller wants the call stopped. requested() may be slow (the
// Python bindings take the GIL to run pending signal handlers), hence the poll interval.
class Interrupt {
 public:
  virtual ~Interrupt() = default;
  virtual bool requested() = 0;
};

// Thrown by work that cannot return a partial result (a tree build) when its Deadline passed; the
// caller asks the Deadline why.
struct Stopped final : std::exception {
  const char* what() const noexcept override { return "stopped by its deadline or an interrupt"; }
};

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Stop : int32_t { none = 0, time_limit = 1, interrupted = 2 };
  // a Ctrl-C is noticed within this interval (plus the step in progress)
  static constexpr std::chrono::milliseconds kPollInterval{10};

  // seconds <= 0 (or NaN): no time limit. interrupt: optional, must outlive the Deadline.
  explicit Deadline(double seconds = 0.0, Interrupt* interrupt = nullptr)
      : unlimited_(!(seconds > 0)),
        interrupt_(interrupt),
        end_(Clock::now() + std::chrono::nanoseconds(unlimited_ ? 0 : int64_t(std::min(seconds, 1e9) * 1e9))),
        next_poll_(Clock::now() + kPollInterval) {}

  bool passed() const {
    if (stopped_ != Stop::none) return true;
    if (unlimited_ && interrupt_ == nullptr) return false;
    const auto now = Clock::now();
    if (!unlimited_ && now >= end_) {
      stopped_ = Stop::time_limit;
      return true;
    }
    if (interrupt_ != nullptr && now >= next_poll_) {
      next_poll_ = now + kPollInterval;
      if (interrupt_->requested()) {
        stopped_ = Stop::interrupted;
        return true;
      }
    }
    return false;
  }

  // why passed() became true (none while it has not)
  Stop stopped() const { return stopped_; }

 private:
  bool unlimited_;
  Interrupt* interrupt_;
  Clock::time_point end_;
  mutable Clock::time_point next_poll_;
  mutable Stop stopped_ = Stop::none;
};

}  // namespace simdplan
