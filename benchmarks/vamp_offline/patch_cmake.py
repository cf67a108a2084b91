"""Points VAMP's CMake at local stand-ins instead of GitHub (see README.md here).

    python3 patch_cmake.py VAMP_SOURCE_DIR SHIMS_DIR

cmake/FetchInitCPM.cmake, which downloads CPM.cmake, is replaced by a CPMAddPackage that only sets
<name>_SOURCE_DIR for the three stand-ins; in cmake/Python.cmake the nanobind download becomes a
lookup of the nanobind installed from PyPI. Fails loudly if the sources are not what it expects.
"""

import pathlib
import sys

CPM = """# simdplan benchmarks/vamp_offline: no downloads; CPMAddPackage maps packages to local stand-ins.
set(VAMP_SHIM_DIR "{shims}" CACHE PATH "local stand-ins for VAMP's GitHub dependencies")
function(CPMAddPackage)
  set(spec "${{ARGV0}}")
  if(spec MATCHES "^gh:[^/]+/([^#@]+)")
    set(name "${{CMAKE_MATCH_1}}")
  else()
    set(name "${{ARGV1}}")
  endif()
  if(name STREQUAL "nigh" OR name STREQUAL "pdqsort" OR name STREQUAL "SIMDxorshift")
    set(${{name}}_SOURCE_DIR "${{VAMP_SHIM_DIR}}/${{name}}" PARENT_SCOPE)
    set(${{name}}_ADDED YES PARENT_SCOPE)
    message(STATUS "vamp_offline: ${{name}} -> ${{VAMP_SHIM_DIR}}/${{name}}")
  else()
    message(FATAL_ERROR "vamp_offline: no local stand-in for ${{spec}}")
  endif()
endfunction()
"""

NANOBIND = """execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
    OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE nanobind_ROOT COMMAND_ERROR_IS_FATAL ANY)
  find_package(nanobind CONFIG REQUIRED)"""


def main(src: str, shims: str) -> None:
    root = pathlib.Path(src)
    fetch = root / "cmake" / "FetchInitCPM.cmake"
    python = root / "cmake" / "Python.cmake"
    if not fetch.is_file() or "CPM.cmake" not in fetch.read_text():
        sys.exit(f"{fetch}: not the VAMP file this patch expects")
    fetch.write_text(CPM.format(shims=pathlib.Path(shims).resolve()))
    lines = python.read_text().splitlines()
    hits = [i for i, line in enumerate(lines) if "CPMAddPackage" in line and "nanobind" in line]
    if len(hits) != 1:
        sys.exit(f"{python}: expected one CPMAddPackage of nanobind, found {len(hits)}")
    lines[hits[0]] = "  " + NANOBIND
    python.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
