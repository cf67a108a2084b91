"""simdplan.scenes: scene files and MotionBenchMaker import arrive with the planner issue.

``mbm_data/`` holds the MotionBenchMaker panda problems (see its NOTICE.md), used by benchmarks.
"""

import os

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mbm_data")
