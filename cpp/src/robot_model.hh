// robot_model.hh: kept at this path only for src/planning.hh, which still includes it by its old name;
// delete once planning moves into src/planner/ and includes "kin/robot_model.hh".
#pragma once
#include "kin/robot_model.hh"
