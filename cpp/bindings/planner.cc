// planner.cc: binds planning (simdplan.planner builds the settings and checks the problem).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <type_traits>

#include "arrays.hh"
#include "poses.hh"
#include "signals.hh"
#include "planner/plan_batch.hh"
#include "planner/planning.hh"
#include "planner/pose_planning.hh"
#include "simdplan/planner/nearest.hh"

namespace simdplan::bind {

namespace {

using planner::PlannerSettings;

const char* stop_name(Deadline::Stop s) {
  return s == Deadline::Stop::time_limit ? "time_limit" : s == Deadline::Stop::interrupted ? "interrupted" : "";
}

using planner::Sampler;

nb::dict to_python(const PlanOutput& out, int32_t dof) {
  nb::dict d;
  d["success"] = out.success;
  d["invalid"] = out.invalid;
  d["limit_clamped"] = out.limit_clamped;
  d["unprovable"] = unprovable_name(out.unprovable);
  double* p;
  auto path = new_array<double>({out.path.size() / size_t(dof ? dof : 1), size_t(dof)}, &p);
  std::copy(out.path.begin(), out.path.end(), p);
  double* ip;
  auto initial = new_array<double>({out.initial_path.size() / size_t(dof ? dof : 1), size_t(dof)}, &ip);
  std::copy(out.initial_path.begin(), out.initial_path.end(), ip);
  d["path"] = path;
  d["initial_path"] = initial;
  using Interpolation = planner::Simplifier::Interpolation;
  static const char* const kInterpolation[] = {"done", "collision", "too_many", "time_limit"};
  d["interpolation"] = kInterpolation[int32_t(out.interpolation)];
  d["stopped"] = stop_name(out.stopped);
  const planner::PlannerStats& s = out.stats;
  nb::dict st;
  st["iterations"] = s.iterations;
  st["collision_checks"] = s.collision_checks;
  st["edge_checks"] = s.edge_checks;
  st["tree_nodes"] = s.tree_nodes;
  st["dd_rejected"] = s.dd_rejected;
  st["edges_proven"] = s.edges_proven;
  st["certificate_samples"] = s.certificate_samples;
  st["edges_undecided"] = s.edges_undecided;
  st["min_step"] = out.min_step;
  st["planning_time_ns"] = s.planning_time_ns;
  st["simplify_time_ns"] = s.simplify_time_ns;
  st["initial_cost"] = s.initial_cost;
  st["final_cost"] = s.final_cost;
  st["goal_index"] = s.goal_index;
  d["stats"] = st;
  return d;
}

std::vector<double> goals_of(const InArray& g, int32_t dof) {
  const Strided s = as_batch(g, dof, "goals");
  std::vector<double> out(size_t(s.rows) * dof);
  for (int64_t r = 0; r < s.rows; ++r)
    for (int32_t j = 0; j < dof; ++j) out[r * dof + j] = s.data[r * s.row_stride + j * s.col_stride];
  return out;
}

std::vector<double> start_of(const InArray& q, int32_t dof) {
  const Strided s = as_vector(q, dof, "start");
  std::vector<double> out(dof);
  for (int32_t j = 0; j < dof; ++j) out[j] = s.data[j * s.col_stride];
  return out;
}

// plan_to_poses' figures beside its plan's dict: the IK solutions planned to, their poses, rounds and times
void add_pose_fields(nb::dict& d, const PosePlanOutput& out, int32_t dof) {
  double* g;
  auto goal_rows = new_array<double>({out.goal_pose.size(), size_t(dof)}, &g);
  std::copy(out.goals.begin(), out.goals.end(), g);
  int32_t* owner;
  auto goal_pose = new_array<int32_t>({out.goal_pose.size()}, &owner);
  std::copy(out.goal_pose.begin(), out.goal_pose.end(), owner);
  d["goals"] = goal_rows;
  d["goal_pose"] = goal_pose;
  d["planned_rounds"] = out.planned_rounds;
  d["ik_time_ns"] = out.ik_ns;
  d["planning_time_ns"] = out.planning_ns;
}

// A batch task's result as plan's (or plan_poses') dict, or {"error", "error_is_value"} when it
// threw; both with "call_ns" and "seed".
nb::dict task_to_python(const PlanTaskResult& r) {
  nb::dict d;
  if (r.error.empty()) {
    d = to_python(r.out, r.dof);
    if (r.pose) add_pose_fields(d, r.pose_out, r.dof);
  } else {
    d["error"] = r.error;
    d["error_is_value"] = r.error_is_value;
  }
  d["call_ns"] = r.call_ns;
  d["seed"] = r.seed;
  return d;
}

// PlanBatch for Python: keeps the Python objects its tasks borrow from (robots, environments,
// settings) alive, and waits without the GIL. Python drives it (simdplan.planner.plan_many): it
// adds tasks while the threads plan, collects results every few ms and so runs its signal
// handlers in between; on Ctrl-C it calls stop().
class PyPlanBatch {
 public:
  explicit PyPlanBatch(int32_t workers) : batch_(workers) {}
  ~PyPlanBatch() { stop(); }

  // tasks: [(robot, env, planner, start, goals, settings, seed index)], a pose task with
  // (IkRequest, targets, rounds, round_iterations) after those (its goals: (0, dof))
  void add(const nb::list& items) {
    std::vector<PlanTask> tasks;
    tasks.reserve(items.size());
    for (nb::handle item : items) {
      nb::tuple t = nb::cast<nb::tuple>(item);
      if (t.size() != 7 && t.size() != 11)
        throw std::invalid_argument("plan batch: a task is (robot, env, planner, start, goals, settings, seed index"
                                    "[, request, targets, rounds, round_iterations])");
      PlanTask task;
      task.robot = &nb::cast<const RobotModel&>(t[0]);
      task.env = &nb::cast<const Environment&>(t[1]);
      const std::string name = nb::cast<std::string>(t[2]);
      if (names_.empty() || names_.back() != name) names_.push_back(name);
      task.planner = &names_.back();
      const int32_t dof = task.robot->dof();
      task.start = start_of(nb::cast<InArray>(t[3]), dof);
      task.goals = goals_of(nb::cast<InArray>(t[4]), dof);
      task.settings = &nb::cast<const PlannerSettings&>(t[5]);
      task.seed_index = nb::cast<uint64_t>(t[6]);
      if (t.size() == 11) {
        task.request = &nb::cast<const IkRequest&>(t[7]);
        task.rounds = nb::cast<int32_t>(t[9]);
        task.round_iterations = nb::cast<int64_t>(t[10]);
        task.targets = pose_plan_goals(*task.robot, *task.request, nb::cast<std::vector<Pose>>(t[8]), task.rounds,
                                       task.round_iterations);
      }
      tasks.push_back(std::move(task));
    }
    batch_.add(std::move(tasks));
    keep_.push_back(items);
  }

  // [(index, result dict)] of the tasks finished since the last call, after up to `wait_s` seconds
  nb::list collect(double wait_s) {
    const auto wait = std::chrono::milliseconds(int64_t(std::clamp(wait_s, 0.0, 60.0) * 1e3));
    std::vector<int64_t> ready;
    {
      nb::gil_scoped_release release;
      ready = batch_.wait_finished(wait);
    }
    nb::list out;
    for (int64_t i : ready) out.append(nb::make_tuple(i, task_to_python(batch_.take(i))));
    return out;
  }

  void stop() {
    batch_.stop();
    nb::gil_scoped_release release;  // the workers never take the GIL
    batch_.join();
  }

  PlanBatch& batch() { return batch_; }

 private:
  PlanBatch batch_;
  std::deque<std::string> names_;  // deque: stable addresses for the tasks' pointers
  std::vector<nb::object> keep_;   // the added task lists
};

}  // namespace

void bind_planner(nb::module_& m) {
  // For tests and benchmarks of the planners' nearest-neighbour structure: inserts the points one
  // by one (as a tree grows), then answers every query. index_from: size at which the k-d tree
  // starts (a huge value gives pure brute force).
  m.def(
      "nearest_neighbors",
      [](const InArray& points, const InArray& queries, int64_t index_from) {
        if (points.ndim() != 2 || queries.ndim() != 2 || points.shape(1) != queries.shape(1))
          throw std::invalid_argument("points and queries must be (n, dof) and (m, dof) with the same dof");
        if (index_from < 1) throw std::invalid_argument("index_from must be >= 1");
        const int32_t dof = int32_t(points.shape(1));
        const Strided p = as_batch(points, dof, "points"), q = as_batch(queries, dof, "queries");
        planner::NearestNeighbors nn(dof, int32_t(std::min<int64_t>(index_from, INT32_MAX)));
        std::vector<float> row(dof);
        int32_t* idx;
        float* d2;
        auto out_i = new_array<int32_t>({size_t(q.rows)}, &idx);
        auto out_d = new_array<float>({size_t(q.rows)}, &d2);
        const auto t0 = std::chrono::steady_clock::now();
        for (int64_t r = 0; r < p.rows; ++r) {
          for (int32_t j = 0; j < dof; ++j) row[j] = float(p.data[r * p.row_stride + j * p.col_stride]);
          nn.add(row.data());
        }
        const auto t1 = std::chrono::steady_clock::now();
        for (int64_t r = 0; r < q.rows; ++r) {
          for (int32_t j = 0; j < dof; ++j) row[j] = float(q.data[r * q.row_stride + j * q.col_stride]);
          const auto [i, d] = nn.nearest(row.data());
          idx[r] = i;
          d2[r] = d;
        }
        const auto t2 = std::chrono::steady_clock::now();
        const auto ns = [](auto a, auto b) { return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count(); };
        return nb::make_tuple(out_i, out_d, ns(t0, t1), ns(t1, t2), nn.indexed());
      },
      nb::arg("points"), nb::arg("queries"), nb::arg("index_from"));

  nb::enum_<Sampler>(m, "Sampler").value("uniform", Sampler::kUniform).value("halton", Sampler::kHalton);
  // the attributes, and the field list Python builds its conversion from, come from the one list
  // of fields in C++ (planner::for_each_setting)
  auto settings_class = nb::class_<PlannerSettings>(m, "PlannerSettings").def(nb::init<>());
  planner::for_each_setting([&](const char* name, auto member, const char*) { settings_class.def_rw(name, member); });

  m.def(
      "planner_settings",
      []() {
        const PlannerSettings defaults;
        nb::list out;
        planner::for_each_setting([&](const char* name, auto member, const char* planner) {
          using Field = std::remove_reference_t<decltype(std::declval<PlannerSettings>().*member)>;
          nb::object value = nb::cast(Field(defaults.*member));
          out.append(nb::make_tuple(name, value, planner == nullptr ? nb::none() : nb::object(nb::str(planner))));
        });
        return out;
      },
      "[(field, default, planner)] of PlannerSettings; planner: the one planner that reads the field, None if all do");
  m.def(
      "planners",
      []() {
        nb::list out;
        for (const planner::PlannerEntry& e : planner::kPlanners) out.append(nb::make_tuple(e.name, e.description));
        return out;
      },
      "[(name, description)] of the C++ planners, the default first");

  m.def(
      "plan",
      [](const RobotModel& robot, const Environment& env, const std::string& name, const InArray& start,
         const InArray& goals, const PlannerSettings& s) {
        const int32_t dof = robot.dof();
        const std::vector<double> q0 = start_of(start, dof), qg = goals_of(goals, dof);
        Interrupt* interrupt = PythonSignals::for_this_thread();
        PlanOutput out;
        {
          nb::gil_scoped_release release;
          out = plan(robot, env, name, q0.data(), qg.data(), int32_t(qg.size() / (dof ? dof : 1)), s, interrupt);
        }
        raise_if_interrupted(out.stopped);
        return to_python(out, dof);
      },
      nb::arg("robot"), nb::arg("env"), nb::arg("planner"), nb::arg("start"), nb::arg("goals"), nb::arg("settings"));

  m.def(
      "plan_poses",
      [](const RobotModel& robot, const Environment& env, const std::string& name, const InArray& start,
         const IkRequest& request, const std::vector<Pose>& targets, int32_t rounds, int64_t round_iterations,
         const PlannerSettings& s) {
        const int32_t dof = robot.dof();
        const std::vector<std::array<float, 12>> goals = pose_plan_goals(robot, request, targets, rounds,
                                                                          round_iterations);
        const std::vector<double> q0 = start_of(start, dof);
        Interrupt* interrupt = PythonSignals::for_this_thread();
        PosePlanOutput out;
        {
          nb::gil_scoped_release release;
          out = plan_to_poses(robot, env, name, q0.data(), request, goals, rounds, round_iterations, s, interrupt);
        }
        raise_if_interrupted(out.stopped);
        nb::dict d = to_python(out.plan, dof);
        add_pose_fields(d, out, dof);
        return d;
      },
      nb::arg("robot"), nb::arg("env"), nb::arg("planner"), nb::arg("start"), nb::arg("request"), nb::arg("targets"),
      nb::arg("rounds"), nb::arg("round_iterations"), nb::arg("settings"),
      "planning to goal poses (planner/pose_planning.hh): the plan's output with the IK solutions it planned to");
  m.def(
      "unprovable_ends",
      [](const RobotModel& robot, const Environment& env, const InArray& start, const InArray& goals, float padding,
         double min_step) {
        if (!(min_step > 0) || !std::isfinite(min_step))
          throw std::invalid_argument("min_step must be positive and finite");
        const int32_t dof = robot.dof();
        std::vector<double> ends = start_of(start, dof);
        const std::vector<double> g = goals_of(goals, dof);
        ends.insert(ends.end(), g.begin(), g.end());
        robot.require_distances(env);
        double step = min_step;
        const int32_t code =
            unprovable_ends(robot, env, ends.data(), int32_t(g.size() / size_t(dof ? dof : 1)), padding, min_step, &step);
        return nb::make_tuple(std::string(unprovable_name(code)), step);
      },
      nb::arg("robot"), nb::arg("env"), nb::arg("start"), nb::arg("goals"), nb::arg("padding"), nb::arg("min_step"),
      "(\"start\" or \"goals\" when certified Link cannot prove any edge out of the start or into any goal, else "
      "\"\"; the give-up length edges at these ends need: min_step, or less near contact)");
  m.def("certify_end_speed", &end_speed, nb::arg("robot"),
        "metres a sphere centre moves at most per unit of the largest joint motion (unprovable_ends' speed)");
  m.attr("min_step_floor") = kMinStepFloor;
  m.def("task_seed", &task_seed, nb::arg("seed"), nb::arg("index"),
        "the seed task `index` of plan_many plans with, given the batch's seed");
  nb::class_<PyPlanBatch>(m, "PlanBatch", "plan_many's thread pool: add tasks, close, collect results")
      .def(nb::init<int32_t>(), nb::arg("workers"))
      .def("add", &PyPlanBatch::add, nb::arg("tasks"),
           "tasks: [(robot, env, planner, start, goals, settings, seed index)]; planned in the order added")
      .def("close", [](PyPlanBatch& b) { b.batch().close(); }, "no more tasks will be added")
      .def("collect", &PyPlanBatch::collect, nb::arg("wait"),
           "[(index, result dict)] of tasks finished since the last call, after up to `wait` seconds")
      .def_prop_ro("done", [](PyPlanBatch& b) { return b.batch().done(); }, "every task was planned and collected")
      .def("stop", &PyPlanBatch::stop, "drop the tasks not started, stop the running ones, wait for the threads");

  // keep_alive: the session holds references to the robot (arg 2) and environment (arg 3)
  nb::class_<PrmSession>(m, "PrmSession")
      .def(nb::init<const RobotModel&, const Environment&, const PlannerSettings&>(), nb::keep_alive<1, 2>(),
           nb::keep_alive<1, 3>(), nb::arg("robot"), nb::arg("env"), nb::arg("settings"))
      .def(
          "grow",
          [](PrmSession& p, int64_t n, double time_limit) {
            Interrupt* interrupt = PythonSignals::for_this_thread();
            Deadline::Stop stopped = Deadline::Stop::none;
            int64_t drawn;
            {
              nb::gil_scoped_release release;
              drawn = p.grow(n, time_limit, interrupt, &stopped);
            }
            raise_if_interrupted(stopped);
            return drawn;
          },
          nb::arg("n_samples"), nb::arg("time_limit"))
      .def(
          "query",
          [](PrmSession& p, const RobotModel& robot, const InArray& start, const InArray& goals,
             const PlannerSettings& s) {
            const int32_t dof = robot.dof();
            const std::vector<double> q0 = start_of(start, dof), qg = goals_of(goals, dof);
            Interrupt* interrupt = PythonSignals::for_this_thread();
            PlanOutput out;
            {
              nb::gil_scoped_release release;
              out = p.query(q0.data(), qg.data(), int32_t(qg.size() / (dof ? dof : 1)), s, interrupt);
            }
            raise_if_interrupted(out.stopped);
            return to_python(out, dof);
          },
          nb::arg("robot"), nb::arg("start"), nb::arg("goals"), nb::arg("settings"))
      .def_prop_ro("vertices", &PrmSession::vertices)
      .def_prop_ro("edges", &PrmSession::edges);
}

}  // namespace simdplan::bind
