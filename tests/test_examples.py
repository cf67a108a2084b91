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


def test_readme_python_example_runs(tmp_path):
    """The README's Python block is what users copy first; it must run as written."""
    readme = os.path.join(EXAMPLES, "..", "README.md")
    with open(readme) as f:
        text = f.read()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    out = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "path.json").exists()
