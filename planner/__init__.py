"""simdplan.planner: planners (RRT, RRT-Connect, PRM) arrive with the planner issue."""
