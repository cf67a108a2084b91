// signals.hh: Ctrl-C for the bindings' long calls (planning, tree builds) made without the GIL.
#pragma once
#include <nanobind/nanobind.h>

#include <stdexcept>

#include "simdplan/deadline.hh"

namespace simdplan::bind {

namespace nb = nanobind;

// Ctrl-C for long calls made with the GIL released: Python runs signal handlers only in the main
// thread and only when asked, so a Deadline polls this (every few ms): it takes the GIL and runs
// pending handlers. A handler that raises (KeyboardInterrupt) leaves its exception set; the call
// then stops and the binding re-raises it. Off the main thread there is nothing to poll.
class PythonSignals final : public Interrupt {
 public:
  bool requested() override {
    nb::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
  }

  // an interrupt for a call made from this thread, or nullptr off the main thread (GIL held)
  static Interrupt* for_this_thread() {
    static PythonSignals signals;
    return on_main_thread() ? &signals : nullptr;
  }

 private:
  static bool on_main_thread() {
    static const unsigned long main_ident = [] {
      nb::object threading = nb::module_::import_("threading");
      return nb::cast<unsigned long>(threading.attr("main_thread")().attr("ident"));
    }();
    return PyThread_get_thread_ident() == main_ident;
  }
};

// after a call that stopped on an interrupt: the handler's exception, re-raised (GIL held)
inline void raise_if_interrupted(Deadline::Stop stopped) {
  if (stopped != Deadline::Stop::interrupted) return;
  if (PyErr_Occurred()) throw nb::python_error();
  throw std::runtime_error("interrupted");  // unreachable: requested() is true only with an exception set
}

}  // namespace simdplan::bind
