#!/bin/bash
# Instructions per free configuration of Clear (RobotModel::is_valid_many, float64 conversion included),
# product kernels: bash product_instructions.sh ROBOT generic|specialized
# callgrind counts only inside is_valid_many; (I(11 calls) - I(1 call)) / 10 / 4096. AVX2 (valgrind runs
# no AVX-512); PYTHONHASHSEED fixed. The specialized kernel must be in SIMDPLAN_CACHE_DIR first
# (SIMDPLAN_ISA=avx2 simdplan compile ROBOT), else product_clear.py builds it under valgrind.
here=$(dirname "$0")
robot=$1; kernel=$2
for c in 1 11; do
  PYTHONHASHSEED=0 SIMDPLAN_ISA=avx2 SIMDPLAN_JIT=off valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "--toggle-collect=simdplan::RobotModel::is_valid_many*" "$(python3 -c 'import sys; print(sys.executable)')" \
    "$here/product_clear.py" "$robot" "$kernel" $c 2>&1 | grep "Collected" | awk '{print $4}'
done | python3 -c "import sys; a,b=[int(x) for x in sys.stdin.read().split()]; print('$robot', '$kernel', round((b-a)/10/4096,1))"
