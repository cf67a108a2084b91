// robots.cc: binds the compiled RobotModel (simdplan.robots builds it from a URDF).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "arrays.hh"
#include "poses.hh"
#include "signals.hh"
#include "kin/ik_solve.hh"
#include "kin/robot_model.hh"

namespace simdplan::bind {

namespace {

using I32 = nb::ndarray<const int32_t, nb::ndim<1>, nb::device::cpu>;
using F64 = nb::ndarray<const double, nb::ndim<1>, nb::device::cpu>;
using U8 = nb::ndarray<const uint8_t, nb::ndim<1>, nb::device::cpu>;

// PERF: releasing the GIL costs more than a single check; release only for batches.
constexpr int64_t kReleaseGilRows = 64;
// rows per chunk of a batch check between two asks for Ctrl-C (milliseconds of work)
constexpr int64_t kInterruptRows = 16384;

// The IK options for solve_ik from the binding's arguments (the Python side checked their values).
IkRequest ik_request(const RobotModel& r, int32_t tip_body, const std::vector<double>& tip, int32_t mode,
                     int32_t axis, double pos_tol, double ori_tol, int32_t n_solutions, int64_t max_attempts,
                     int32_t attempt_iters, double min_distance, float padding, const std::vector<double>& seeds) {
  if (tip.size() != 12) throw std::invalid_argument("tip: 12 values");
  if (tip_body < 0 || tip_body >= r.view().n_bodies) throw std::invalid_argument("tip_body out of range");
  if (mode < 0 || mode > 2 || axis < 0 || axis > 2) throw std::invalid_argument("mode in 0..2, axis in 0..2");
  if (r.dof() > 0 && seeds.size() % size_t(r.dof()) != 0) throw std::invalid_argument("seeds: rows of dof values");
  IkRequest q;
  q.tip_body = tip_body;
  for (int i = 0; i < 12; ++i) q.tip[i] = float(tip[i]);
  q.mode = mode;
  q.axis = axis;
  q.pos_tol = pos_tol;
  q.ori_tol = ori_tol;
  q.n_solutions = n_solutions;
  q.max_attempts = max_attempts;
  q.attempt_iters = attempt_iters;
  q.min_distance = min_distance;
  q.padding = padding;
  q.seeds.assign(seeds.begin(), seeds.end());
  q.dof = r.dof();
  q.n_bodies = r.view().n_bodies;
  return q;
}

// (solutions (k, dof), errors (k, 2): position m and angle rad, attempts, iterations, colliding, stopped)
nb::tuple ik_tuple(const IkOutput& out, int32_t dof_) {
  const size_t n = out.pos_err.size(), dof = size_t(dof_);
  double *sol, *err;
  auto solutions = new_array<double>({n, dof}, &sol);
  std::copy(out.solutions.begin(), out.solutions.end(), sol);
  auto errors = new_array<double>({n, size_t(2)}, &err);
  for (size_t i = 0; i < n; ++i) err[2 * i] = out.pos_err[i], err[2 * i + 1] = out.rot_err[i];
  const char* stopped = out.stopped == Deadline::Stop::time_limit ? "time_limit" : "";
  return nb::make_tuple(solutions, errors, out.attempts, out.iterations, out.colliding, stopped);
}

// The RobotView's tables as lists, by field name: what a kernel generated for this robot reads
// (python/simdplan/specialize), exactly as the generic kernels see them (after the load-time
// tables of robot_shortcuts.cc).
nb::dict view_tables(const RobotModel& r) {
  const RobotView& v = r.view();
  nb::dict d;
  auto ints = [](const int32_t* p, int64_t n) { return std::vector<int32_t>(p, p + n); };
  auto floats = [](const float* p, int64_t n) { return std::vector<float>(p, p + n); };
  const int64_t nb_ = v.n_bodies, ng = v.n_groups, np = v.n_pairs, nk = v.n_pair_blocks;
  d["dof"] = v.dof, d["n_bodies"] = v.n_bodies, d["n_groups"] = v.n_groups;
  d["n_static_groups"] = v.n_static_groups, d["n_spheres"] = v.n_spheres, d["n_pairs"] = v.n_pairs;
  d["n_pair_blocks"] = v.n_pair_blocks, d["list_max_padding"] = v.list_max_padding, d["far_skip"] = v.far_skip;
  d["body_parent"] = ints(v.body_parent, nb_), d["body_kind"] = ints(v.body_kind, nb_);
  d["body_dof"] = ints(v.body_dof, nb_), d["body_scale"] = floats(v.body_scale, nb_);
  d["body_offset"] = floats(v.body_offset, nb_), d["body_origin"] = floats(v.body_origin, 12 * nb_);
  d["body_axes"] = ints(v.body_axes, nb_), d["body_perm"] = ints(v.body_perm, 4 * nb_);
  d["body_sign"] = floats(v.body_sign, 4 * nb_);
  d["group_body"] = ints(v.group_body, ng), d["group_begin"] = ints(v.group_begin, ng);
  d["group_end"] = ints(v.group_end, ng), d["group_bound"] = floats(v.group_bound, 4 * ng);
  d["body_bound"] = floats(v.body_bound, 4 * nb_), d["body_group_begin"] = ints(v.body_group_begin, nb_);
  d["body_group_end"] = ints(v.body_group_end, nb_), d["spheres"] = floats(v.spheres, 4 * int64_t(v.n_spheres));
  d["pairs"] = ints(v.pairs, 2 * np), d["pair_ranges"] = ints(v.pair_ranges, 2 * np);
  int64_t n_listed = 0;
  for (int64_t p = 0; p < np; ++p) n_listed = std::max<int64_t>(n_listed, v.pair_ranges[2 * p + 1]);
  d["sphere_pairs"] = ints(v.sphere_pairs, 2 * n_listed);
  d["pair_block_begin"] = ints(v.pair_block_begin, nk + 1), d["pair_order"] = ints(v.pair_order, np);
  d["pair_block_side"] = ints(v.pair_block_side, 2 * nk);
  return d;
}

}  // namespace

void bind_robots(nb::module_& m) {
  // opaque: RobotModel.ik_request builds one (checked), RobotModel.ik takes it
  nb::class_<IkRequest>(m, "IkRequest");
  m.attr("certify_margin") = kCertifyMargin;  // metres (collision/certified_link.hh)
  nb::class_<RobotModel>(m, "RobotModel")
      .def(
          "__init__",
          [](RobotModel* self, int32_t dof, const I32& body_parent, const I32& body_kind, const I32& body_dof,
             const FloatIn& body_scale, const FloatIn& body_offset, const FloatIn& body_origin, const I32& group_body,
             const I32& group_begin, const I32& group_end, const FloatIn& group_bound, const FloatIn& spheres,
             const I32& pairs, const F64& lower, const F64& upper, const U8& wrap, const I32& pair_ranges,
             const I32& sphere_pairs, float list_max_padding, const FloatIn& sphere_reach, bool fast_paths) {
            RobotArrays a;
            a.dof = dof;
            a.body_parent = to_vector_1d(body_parent);
            a.body_kind = to_vector_1d(body_kind);
            a.body_dof = to_vector_1d(body_dof);
            a.body_scale = to_vector(body_scale);
            a.body_offset = to_vector(body_offset);
            a.body_origin = to_vector(body_origin);
            a.group_body = to_vector_1d(group_body);
            a.group_begin = to_vector_1d(group_begin);
            a.group_end = to_vector_1d(group_end);
            a.group_bound = to_vector(group_bound);
            a.spheres = to_vector(spheres);
            a.pairs = to_vector_1d(pairs);
            a.lower = to_vector_1d(lower);
            a.upper = to_vector_1d(upper);
            a.wrap = to_vector_1d(wrap);
            a.pair_ranges = to_vector_1d(pair_ranges);
            a.sphere_pairs = to_vector_1d(sphere_pairs);
            a.list_max_padding = list_max_padding;
            a.sphere_reach = to_vector(sphere_reach);
            a.fast_paths = fast_paths;
            new (self) RobotModel(std::move(a));
          },
          nb::arg("dof"), nb::arg("body_parent"), nb::arg("body_kind"), nb::arg("body_dof"), nb::arg("body_scale"),
          nb::arg("body_offset"), nb::arg("body_origin"), nb::arg("group_body"), nb::arg("group_begin"),
          nb::arg("group_end"), nb::arg("group_bound"), nb::arg("spheres"), nb::arg("pairs"), nb::arg("lower"),
          nb::arg("upper"), nb::arg("wrap"), nb::arg("pair_ranges"), nb::arg("sphere_pairs"),
          nb::arg("list_max_padding"), nb::arg("sphere_reach"), nb::arg("fast_paths") = true)
      .def_prop_ro("dof", &RobotModel::dof)
      .def(
          "is_valid",
          [](const RobotModel& r, const Environment& env, const InArray& q, float padding) {
            return r.is_valid(env, as_vector(q, r.dof(), "q"), padding);
          },
          nb::arg("env"), nb::arg("q"), nb::arg("padding"))
      .def(
          "is_valid_many",
          [](const RobotModel& r, const Environment& env, const InArray& q, float padding) {
            const Strided s = as_batch(q, r.dof(), "Q");
            bool* out;
            auto arr = new_array<bool>({size_t(s.rows)}, &out);
            if (s.rows >= kReleaseGilRows) {
              // a batch of millions runs for seconds: Ctrl-C is asked between chunks of rows
              const Deadline stop(0.0, PythonSignals::for_this_thread());
              {
                nb::gil_scoped_release release;
                for (int64_t r0 = 0; r0 < s.rows && !stop.passed(); r0 += kInterruptRows) {
                  Strided part = s;
                  part.data = s.data + r0 * s.row_stride;
                  part.rows = std::min(kInterruptRows, s.rows - r0);
                  r.is_valid_many(env, part, padding, reinterpret_cast<uint8_t*>(out) + r0);
                }
              }
              raise_if_interrupted(stop.stopped());
            } else {
              r.is_valid_many(env, s, padding, reinterpret_cast<uint8_t*>(out));
            }
            return arr;
          },
          nb::arg("env"), nb::arg("Q"), nb::arg("padding"))
      .def(
          "is_motion_valid",
          [](const RobotModel& r, const Environment& env, const InArray& q0, const InArray& q1, double resolution,
             float padding) {
            const Strided a = as_vector(q0, r.dof(), "q0"), b = as_vector(q1, r.dof(), "q1");
            nb::gil_scoped_release release;
            return r.is_motion_valid(env, a, b, resolution, padding);
          },
          nb::arg("env"), nb::arg("q0"), nb::arg("q1"), nb::arg("resolution"), nb::arg("padding"))
      .def(
          "planner_link",
          [](const RobotModel& r, const Environment& env, const InArray& q0, const InArray& q1, double resolution,
             float padding, bool wide) {
            const Strided a = as_vector(q0, r.dof(), "q0"), b = as_vector(q1, r.dof(), "q1");
            nb::gil_scoped_release release;
            return r.planner_link(env, a, b, resolution, padding, wide);
          },
          nb::arg("env"), nb::arg("q0"), nb::arg("q1"), nb::arg("resolution"), nb::arg("padding"),
          nb::arg("wide") = false,
          "The planners' discrete Link kernel (float32 samples, the shortcuts between chunks; wide: the "
          "simplifier's, lanes samples at a time); for tests.")
      .def(
          "planner_link_samples",
          [](const RobotModel& r, const Environment& env, const InArray& q0, const InArray& q1, double resolution,
             float padding, bool wide) {
            const Strided a = as_vector(q0, r.dof(), "q0"), b = as_vector(q1, r.dof(), "q1");
            int64_t samples = 0;
            bool free;
            {
              nb::gil_scoped_release release;
              free = r.planner_link(env, a, b, resolution, padding, wide, &samples);
            }
            return nb::make_tuple(free, samples);
          },
          nb::arg("env"), nb::arg("q0"), nb::arg("q1"), nb::arg("resolution"), nb::arg("padding"),
          nb::arg("wide") = false,
          "planner_link and the samples of the chunks it reached (what a plan's collision_checks counts); "
          "for tests.")
      .def(
          "motion_samples",
          [](const RobotModel& r, const InArray& q0, const InArray& q1, double resolution) {
            return r.motion_samples(as_vector(q0, r.dof(), "q0"), as_vector(q1, r.dof(), "q1"), resolution);
          },
          nb::arg("q0"), nb::arg("q1"), nb::arg("resolution"))
      .def(
          "fk_spheres",
          [](const RobotModel& r, const InArray& q) {
            const Strided s = as_batch(q, r.dof(), "Q");
            float* out;
            auto arr = new_array<float>({size_t(s.rows), size_t(r.view().n_spheres), size_t(4)}, &out);
            r.fk_spheres(s, out);
            return arr;
          },
          nb::arg("Q"))
      .def(
          "fk_bodies",
          [](const RobotModel& r, const InArray& q) {
            const Strided s = as_batch(q, r.dof(), "Q");
            float* out;
            auto arr = new_array<float>({size_t(s.rows), size_t(r.view().n_bodies), size_t(12)}, &out);
            r.fk_bodies(s, out);
            return arr;
          },
          nb::arg("Q"))
      .def(
          "clearance_many",
          [](const RobotModel& r, const Environment& env, const InArray& q, float padding) {
            const Strided s = as_batch(q, r.dof(), "Q");
            float *e, *c;
            auto env_arr = new_array<float>({size_t(s.rows)}, &e);
            auto self_arr = new_array<float>({size_t(s.rows)}, &c);
            {
              nb::gil_scoped_release release;
              r.clearance_many(env, s, padding, e, c);
            }
            return nb::make_tuple(env_arr, self_arr);
          },
          nb::arg("env"), nb::arg("Q"), nb::arg("padding"))
      .def(
          "certify_motion",
          [](const RobotModel& r, const Environment& env, const InArray& q0, const InArray& q1, float padding,
             double min_step) {
            const Strided a = as_vector(q0, r.dof(), "q0"), b = as_vector(q1, r.dof(), "q1");
            CertifyResult res;
            {
              nb::gil_scoped_release release;
              res = r.certify_motion(env, a, b, padding, min_step);
            }
            return nb::make_tuple(int(res.status), res.samples, res.t);
          },
          nb::arg("env"), nb::arg("q0"), nb::arg("q1"), nb::arg("padding"), nb::arg("min_step"))
      .def(
          "ik_request",
          [](const RobotModel& r, int32_t tip_body, const std::vector<double>& tip, int32_t mode, int32_t axis,
             double pos_tol, double ori_tol, int32_t n_solutions, int64_t max_attempts, int32_t attempt_iters,
             double min_distance, float padding, const std::vector<double>& seeds) {
            return ik_request(r, tip_body, tip, mode, axis, pos_tol, ori_tol, n_solutions, max_attempts,
                              attempt_iters, min_distance, padding, seeds);
          },
          nb::arg("tip_body"), nb::arg("tip"), nb::arg("mode"), nb::arg("axis"), nb::arg("pos_tol"),
          nb::arg("ori_tol"), nb::arg("n_solutions"), nb::arg("max_attempts"), nb::arg("attempt_iters"),
          nb::arg("min_distance"), nb::arg("padding"), nb::arg("seeds"))
      // PERF: the options come as one IkRequest the caller keeps, the goals as arrays, the errors go
      // back as one array: after a plan (cold caches), converting keyword options and lists took as
      // long as the solve itself (MotionBenchMaker hand poses).
      .def(
          "ik",
          [](const RobotModel& r, const Environment& env, const IkRequest& q, const std::vector<Pose>& targets,
             uint64_t seed, double time_limit) {
            check_request(r, q);
            const std::vector<std::array<float, 12>> goals = goal_frames(targets);
            Interrupt* interrupt = PythonSignals::for_this_thread();
            std::vector<IkOutput> outs;
            Deadline deadline(time_limit, interrupt);  // one for the whole batch
            {
              nb::gil_scoped_release release;
              outs = solve_ik(r, env, q, seed, goals, deadline);
            }
            raise_if_interrupted(deadline.stopped());
            nb::list res;
            for (const IkOutput& o : outs) res.append(ik_tuple(o, r.dof()));
            return res;
          },
          nb::arg("env"), nb::arg("request"), nb::arg("targets"), nb::arg("seed"), nb::arg("time_limit"))
      .def(
          "motion_bounds",
          [](const RobotModel& r, const InArray& q0, const InArray& q1) {
            double* out;
            auto arr = new_array<double>({size_t(r.view().n_spheres)}, &out);
            r.motion_bounds(as_vector(q0, r.dof(), "q0"), as_vector(q1, r.dof(), "q1"), out);
            return arr;
          },
          nb::arg("q0"), nb::arg("q1"))
      .def(
          "chord_bounds",
          [](const RobotModel& r, const InArray& q0, const InArray& q1, double t0, double t1) {
            double* out;
            auto arr = new_array<double>({size_t(r.view().n_groups)}, &out);
            r.chord_bounds(as_vector(q0, r.dof(), "q0"), as_vector(q1, r.dof(), "q1"), t0, t1, out);
            return arr;
          },
          nb::arg("q0"), nb::arg("q1"), nb::arg("t0"), nb::arg("t1"))
      .def(
          "distance_report",
          [](const RobotModel& r, const Environment& env, const InArray& q, float padding) {
            nb::list out;
            for (const Proximity& p : r.distance_report(env, as_vector(q, r.dof(), "q"), padding))
              out.append(nb::make_tuple(p.sphere, p.kind, p.other, p.clearance,
                                        nb::make_tuple(p.on_robot[0], p.on_robot[1], p.on_robot[2]),
                                        nb::make_tuple(p.on_other[0], p.on_other[1], p.on_other[2])));
            return out;
          },
          nb::arg("env"), nb::arg("q"), nb::arg("padding"))
      .def(
          "contacts",
          [](const RobotModel& r, const Environment& env, const InArray& q, float padding) {
            nb::list out;
            for (const Contact& c : r.contacts(env, as_vector(q, r.dof(), "q"), padding))
              out.append(nb::make_tuple(c.self, c.sphere, c.other, c.kind, c.depth));
            return out;
          },
          nb::arg("env"), nb::arg("q"), nb::arg("padding"))
      .def("view_tables", &view_tables)
      .def(
          "attach_kernels",
          [](RobotModel& r, const std::string& path, const std::string& key) {
            nb::gil_scoped_release release;
            r.attach_kernels(path, key);
          },
          nb::arg("path"), nb::arg("key"))
      .def("detach_kernels", &RobotModel::detach_kernels)
      .def("reattach_kernels", &RobotModel::reattach_kernels)
      .def_prop_ro("kernel_kind", [](const RobotModel& r) { return std::string(r.kernel_kind()); });
}

}  // namespace simdplan::bind
