// simdplan/planner/registry.hh: every planner by name, and PlannerSettings, the union of the shared
// settings and each planner's own. The bindings expose both (simdplan._core.planners(),
// simdplan._core.planner_settings()) so Python lists planners and settings from here.
// Adding a planner: CONTRIBUTING.md, "Adding a planner".
#pragma once
#include <iterator>
#include <string>
#include <vector>

#include "simdplan/planner/common.hh"
#include "simdplan/planner/prm.hh"
#include "simdplan/planner/rrt.hh"
#include "simdplan/planner/rrtc.hh"

namespace simdplan::planner {

struct PlannerSettings : SharedSettings, RrtcSettings, RrtSettings, PrmSettings {};

struct PlannerEntry {
  const char* name;
  std::vector<float> (*run)(const Problem&, const PlannerSettings&);
  const char* description;
};

// NOTE: the first entry is the default planner of simdplan.plan
inline const PlannerEntry kPlanners[] = {
    {"rrtc", [](const Problem& p, const PlannerSettings& s) { return rrt_connect(p, s); },
     "RRT-Connect (Kuffner and LaValle 2000), balanced, with dynamic domains"},
    {"rrt", [](const Problem& p, const PlannerSettings& s) { return rrt(p, s); },
     "goal-biased RRT (LaValle 1998)"},
    {"prm", [](const Problem& p, const PlannerSettings& s) { return prm(p, s); },
     "probabilistic roadmap (Kavraki et al. 1996), built for the query"},
};

// visit(name, member pointer, planner): every settings field, planner = the one planner that reads
// it, or nullptr for the shared ones
template <class Visit>
void for_each_setting(Visit&& visit) {
  SharedSettings::fields([&](const char* name, auto member) { visit(name, member, nullptr); });
  RrtcSettings::fields([&](const char* name, auto member) { visit(name, member, "rrtc"); });
  RrtSettings::fields([&](const char* name, auto member) { visit(name, member, "rrt"); });
  PrmSettings::fields([&](const char* name, auto member) { visit(name, member, "prm"); });
}

// nullptr if no planner has this name
inline const PlannerEntry* find_planner(const std::string& name) {
  for (const PlannerEntry& e : kPlanners)
    if (name == e.name) return &e;
  return nullptr;
}

// "rrtc, rrt or prm", for messages
inline std::string planner_names() {
  std::string out;
  const size_t n = std::size(kPlanners);
  for (size_t i = 0; i < n; ++i) out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(kPlanners[i].name);
  return out;
}

}  // namespace simdplan::planner
