#!/usr/bin/env bash
# Builds and pip-installs VAMP 0.6.4 from its PyPI sdist on a machine that reaches PyPI and Debian
# but not GitHub, for the side-by-side benchmarks (simdplan.bench.vamp_baseline). Not part of simdplan.
#
#   bash benchmarks/vamp_offline/build.sh [WORKDIR]      # root for apt; about 4 min on 2 cores
#
# What differs from an upstream build (README.md here): its three GitHub dependencies are replaced
# by the stand-ins in shims/, nanobind comes from PyPI, and its ISA is a fixed level,
# VAMP_ARCH = -march=x86-64-v3 (AVX2 + FMA, what VAMP's 8-wide vectors need), not its default
# -march for the host CPU, so the build does not depend on the machine that runs it. x86-64 only, as VAMP is.
set -euo pipefail
[ "$(uname -m)" = x86_64 ] || { echo "vamp_offline: VAMP's vectors here are x86-64 AVX2 only" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${1:-$(mktemp -d)}
VERSION=0.6.4
VAMP_ARCH=${VAMP_ARCH:--march=x86-64-v3}  # override to compare other levels (README.md here)

if ! [ -d /usr/include/eigen3 ] || ! [ -f /usr/include/boost/sort/pdqsort/pdqsort.hpp ]; then
  # Eigen: VAMP's find_package; Boost.Sort: the pdqsort stand-in
  apt-get install -y libeigen3-dev libboost-dev || { apt-get update && apt-get install -y libeigen3-dev libboost-dev; }
fi
python3 -m pip install "scikit-build-core>=0.4.3" "nanobind>=2.0.0" cmake ninja typing_extensions
python3 -m pip download --no-deps --no-binary vamp-planner "vamp-planner==$VERSION" -d "$WORK"
tar -xzf "$WORK/vamp_planner-$VERSION.tar.gz" -C "$WORK"
SRC="$WORK/vamp_planner-$VERSION"
python3 "$HERE/patch_cmake.py" "$SRC" "$HERE/shims"
(cd "$SRC" && CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}" python3 -m pip install --no-build-isolation \
  --config-settings=cmake.define.VAMP_ARCH="$VAMP_ARCH" .)
python3 -c "import vamp; print('installed VAMP with robots', ', '.join(vamp.robots))"
