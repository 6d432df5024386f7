"""The Python examples in README.md and docs/ must run as written."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def python_blocks(path: Path) -> list[str]:
    # A block opts out of execution with ```python no-run (it needs a provider key or a server).
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


EXAMPLES = [(path, index, code) for path in DOCS for index, code in enumerate(python_blocks(path))]


@pytest.mark.parametrize(("path", "index", "code"), EXAMPLES, ids=[f"{p.name}#{i}" for p, i, _ in EXAMPLES])
def test_example_runs(path: Path, index: int, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"{path.name} example {index} failed:\n{done.stdout}\n{done.stderr}"
