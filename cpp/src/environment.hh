// environment.hh: kept at this path only for src/planning.hh, which still includes it by its old name;
// delete once planning moves into src/planner/ and includes "collision/environment.hh".
#pragma once
#include "collision/environment.hh"
