"""simdplan.scenes: scene files (load/save, schema), shipped examples, MotionBenchMaker import.

    scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))
    scene.robot, scene.env, scene.start, scene.goals, scene.settings
    simdplan.scenes.save(scene, "copy.json")
    problems = simdplan.scenes.mbm.load(classes=["cage"], mode="reference")
    problems = simdplan.scenes.generate(robot, "shelf", 20, seed=0)   # for any robot (generator.py)

The file format is described in ``scene.py`` and published as a JSON Schema (draft 2020-12) in
``schema.json`` (``SCHEMA_PATH``). ``mbm_data/`` holds the MotionBenchMaker panda problems (see its
NOTICE.md); ``simdplan.scenes.mbm`` turns them into Scenes.
"""

import os

from simdplan.scenes import mbm
from simdplan.scenes.generator import FAMILIES, generate
from simdplan.scenes.scene import (
    EXAMPLES_DIR,
    OBSTACLE_TYPES,
    SCHEMA_PATH,
    Scene,
    SceneError,
    dumps,
    example,
    examples,
    load,
    save,
)

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mbm_data")

__all__ = ["Scene", "SceneError", "load", "save", "dumps", "example", "examples", "mbm", "generate", "FAMILIES",
           "SCHEMA_PATH", "EXAMPLES_DIR", "OBSTACLE_TYPES", "DATA_DIR"]
