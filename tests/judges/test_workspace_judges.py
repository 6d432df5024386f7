import sys
from pathlib import Path

import pytest

from jurybox import Context, Jury, Status, evaluate
from jurybox.judges import command, file_contains, file_exists


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "q1.csv").write_text("listing,revenue\nBeach House,1200\n")
    return tmp_path


def test_file_exists_with_globs(workspace: Path) -> None:
    ctx = Context(workspace=workspace)
    assert evaluate(file_exists("reports/*.csv"), ctx).status is Status.PASS
    assert evaluate(file_exists("reports/q2.csv"), ctx).status is Status.FAIL
    no_workspace = evaluate(file_exists("x"), Context())
    assert no_workspace.status is Status.ERROR and "needs Context.workspace" in no_workspace.reasoning
    with pytest.raises(ValueError, match="stay inside"):
        file_exists("../etc/passwd")


def test_file_contains_text_and_pattern(workspace: Path) -> None:
    ctx = Context(workspace=workspace)
    assert evaluate(file_contains("reports/q1.csv", "Beach House"), ctx).status is Status.PASS
    assert evaluate(file_contains("reports/*.csv", pattern=r"revenue\n.*,\d+"), ctx).status is Status.PASS
    assert evaluate(file_contains("reports/q1.csv", "Cabin"), ctx).status is Status.FAIL
    assert evaluate(file_contains("missing.txt", "x"), ctx).status is Status.FAIL
    with pytest.raises(ValueError, match="exactly one"):
        file_contains("a", "x", pattern="y")


def test_command_runs_in_workspace_and_keeps_output(workspace: Path) -> None:
    ctx = Context(workspace=workspace)
    ok = evaluate(command([sys.executable, "-c", "import os; print(sorted(os.listdir('.')))"]), ctx)
    assert ok.status is Status.PASS
    assert "reports" in ok.metadata["stdout"]
    failing = evaluate(command([sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]), ctx)
    assert failing.status is Status.FAIL
    assert failing.metadata["exit_code"] == 3 and "boom" in failing.reasoning
    assert failing.checks[0].message == "exit 3, expected 0"
    assert evaluate(command("exit 3", shell=True, expect_exit=3), ctx).status is Status.PASS


def test_command_that_hangs_is_killed_and_fails(workspace: Path) -> None:
    hung = evaluate(
        command([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5), Context(workspace=workspace)
    )
    assert hung.status is Status.FAIL
    assert "did not finish within 0.5s" in hung.reasoning


def test_missing_command_is_a_clear_error(workspace: Path) -> None:
    with pytest.raises(ValueError, match="command not found: 'no-such-tool-xyz'"):
        command("no-such-tool-xyz --version")
    missing_script = evaluate(command("./build.sh"), Context(workspace=workspace))
    assert missing_script.status is Status.ERROR and "command not found" in missing_script.reasoning
    with pytest.raises(ValueError, match="positive"):
        command("true", timeout=0)


def test_blocking_commands_run_concurrently_in_a_jury(workspace: Path) -> None:
    sleepers = [command([sys.executable, "-c", "import time; time.sleep(0.3)"], name=f"s{i}") for i in range(4)]
    result = evaluate(Jury(*sleepers), Context(workspace=workspace))
    assert result.status is Status.PASS
    assert all(getattr(j, "blocking", False) for j in sleepers)
