"""The build judge runs a tool's tests in the workspace and reads its own summary.

pytest, npm (node --test) and cargo run for real on tiny projects made here
(npm and cargo are skipped where they are not installed). Maven, Gradle, Jest,
Vitest and Mocha summaries are read from output written here in each tool's
documented format, since their runners need downloads this machine cannot make.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jurybox import Context, Status, evaluate
from jurybox.judges import build, read_summary


def _pytest_project(folder: Path, tests: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_app.py").write_text(tests)
    return folder


def test_a_green_pytest_run_passes_with_its_counts(tmp_path: Path) -> None:
    project = _pytest_project(tmp_path / "green", "def test_a():\n    pass\n\ndef test_b():\n    assert 1 + 1 == 2\n")
    result = evaluate(
        build("pytest", cmd=[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]),
        Context(workspace=project),
    )
    assert result.status is Status.PASS, result.reasoning
    assert result.metadata["summary"] == {"passed": 2, "failed": 0, "errors": 0, "skipped": 0}
    assert result.metadata["exit_code"] == 0 and "2 passed" in result.reasoning


def test_a_failing_pytest_run_fails_naming_the_counts_and_the_end_of_the_output(tmp_path: Path) -> None:
    project = _pytest_project(tmp_path / "red", "def test_a():\n    pass\n\ndef test_b():\n    assert 'x' == 'y'\n")
    result = evaluate(
        build("pytest", cmd=[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]),
        Context(workspace=project),
    )
    assert result.status is Status.FAIL
    assert result.metadata["summary"]["failed"] == 1 and result.metadata["summary"]["passed"] == 1
    assert "exited 1" in result.reasoning and "1 failed or errored, at most 0" in result.reasoning
    tolerant = build("pytest", cmd=[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], max_failed=1)
    assert evaluate(tolerant, Context(workspace=project)).status is Status.FAIL  # exit code 1 still fails


def test_no_tests_at_all_is_not_a_pass(tmp_path: Path) -> None:
    project = _pytest_project(tmp_path / "empty", "x = 1\n")
    result = evaluate(
        build("pytest", cmd=[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]),
        Context(workspace=project),
    )
    assert result.status is Status.FAIL and "exited 5" in result.reasoning


@pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None, reason="npm is not installed")
def test_npm_test_with_node_test_runner(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(
        json.dumps({"name": "demo", "version": "1.0.0", "scripts": {"test": "node --test"}})
    )
    (tmp_path / "add.test.js").write_text(
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "test('adds', () => assert.strictEqual(1 + 2, 3));\n"
        "test('skipped', { skip: true }, () => {});\n"
    )
    result = evaluate(build("npm"), Context(workspace=tmp_path))
    assert result.status is Status.PASS, result.reasoning
    assert result.metadata["summary"] == {"passed": 1, "failed": 0, "errors": 0, "skipped": 1}


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_test_sums_every_test_binary(tmp_path: Path) -> None:
    crate = tmp_path / "demo"
    done = subprocess.run(
        ["cargo", "new", "--lib", "--offline", "--vcs", "none", str(crate)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cargo cannot create a crate here: {done.stderr.decode()[-200:]}")
    (crate / "src" / "lib.rs").write_text(
        "pub fn add(a: u64, b: u64) -> u64 { a + b }\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n"
        "    #[test] fn adds() { assert_eq!(add(2, 2), 4); }\n"
        "    #[test] #[ignore] fn slow() {}\n}\n"
    )
    (crate / "tests").mkdir()
    (crate / "tests" / "more.rs").write_text("#[test] fn other() { assert!(demo::add(1, 1) == 2); }\n")
    result = evaluate(build("cargo", cmd="cargo test --offline -q", timeout=300), Context(workspace=crate))
    assert result.status is Status.PASS, result.reasoning
    assert result.metadata["summary"] == {"passed": 2, "failed": 0, "errors": 0, "skipped": 1}


_MAVEN_FAILING = """\
[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running com.example.AppTest
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1, Time elapsed: 0.041 s <<< FAILURE! - in com.example.AppTest
[INFO] Running com.example.OtherTest
[INFO] Tests run: 4, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 0.01 s - in com.example.OtherTest
[INFO]
[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   AppTest.adds:12 expected:<4> but was:<5>
[INFO]
[ERROR] Tests run: 7, Failures: 1, Errors: 1, Skipped: 1
[INFO]
[INFO] BUILD FAILURE
"""

_GRADLE_FAILING = """\
> Task :test FAILED

AppTest > adds() FAILED
    org.opentest4j.AssertionFailedError at AppTest.java:12

5 tests completed, 1 failed, 1 skipped

FAILURE: Build failed with an exception.
"""

_JEST = """\
PASS  src/a.test.js
FAIL  src/b.test.js
Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 2 skipped, 6 passed, 9 total
Snapshots:   0 total
Time:        1.2 s
"""

_VITEST = """\
 \x1b[32m✓\x1b[39m src/a.test.ts (3 tests) 4ms
 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 5 passed | 1 skipped (7)
   Start at  10:00:00
"""

_PYTEST_COLOURED = "\x1b[31m=== 2 failed, 10 passed, 1 error, 3 skipped in 0.52s ===\x1b[0m\n"

_MOCHA = """\
  adder
    ✔ adds
    1) subtracts

  5 passing (12ms)
  1 pending
  1 failing
"""


@pytest.mark.parametrize(
    ("tool", "output", "expected"),
    [
        ("maven", _MAVEN_FAILING, {"passed": 4, "failed": 1, "errors": 1, "skipped": 1}),
        ("gradle", _GRADLE_FAILING, {"passed": 3, "failed": 1, "errors": 0, "skipped": 1}),
        ("npm", _JEST, {"passed": 6, "failed": 1, "errors": 0, "skipped": 2}),
        ("npm", _VITEST, {"passed": 5, "failed": 1, "errors": 0, "skipped": 1}),
        ("npm", _MOCHA, {"passed": 5, "failed": 1, "errors": 0, "skipped": 1}),
        ("pytest", _PYTEST_COLOURED, {"passed": 10, "failed": 2, "errors": 1, "skipped": 3}),
        ("cargo", "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
                  "test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out\n",
         {"passed": 4, "failed": 2, "errors": 0, "skipped": 1}),
    ],
)  # fmt: skip
def test_each_tools_summary_is_read(tool: str, output: str, expected: dict[str, int]) -> None:
    summary = read_summary(tool, output)
    assert summary is not None and summary.to_dict() == expected


def test_output_without_a_summary_reads_as_none_and_needs_min_passed_zero(tmp_path: Path) -> None:
    assert read_summary("gradle", "BUILD SUCCESSFUL in 3s\n") is None
    quiet = [sys.executable, "-c", "print('BUILD SUCCESSFUL in 3s')"]
    strict = evaluate(build("gradle", cmd=quiet), Context(workspace=tmp_path))
    assert strict.status is Status.FAIL and "no gradle test summary in the output" in strict.reasoning
    lenient = evaluate(build("gradle", cmd=quiet, min_passed=0), Context(workspace=tmp_path))
    assert lenient.status is Status.PASS and "no test summary" in lenient.reasoning


def test_a_hung_build_is_killed_and_fails(tmp_path: Path) -> None:
    hung = build("pytest", cmd=[sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    result = evaluate(hung, Context(workspace=tmp_path))
    assert result.status is Status.FAIL and "did not finish within 0.5s" in result.reasoning


def test_options_are_checked_when_the_judge_is_built() -> None:
    with pytest.raises(ValueError, match="must be one of pytest, npm, maven, gradle, cargo"):
        build("make")
    with pytest.raises(ValueError, match="not on PATH"):
        build("npm", cmd="no-such-program-here test")
    with pytest.raises(ValueError, match="whole number"):
        build("pytest", min_passed=-1)
    with pytest.raises(ValueError, match="positive number of seconds"):
        build("pytest", timeout=0)
