"""Every example runs end to end with --smoke (they are the README's first contact with users)."""

import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


@pytest.mark.parametrize("script", sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py")))
def test_example_runs(script):
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), "--smoke"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip(), "an example should say what it did"
