"""Agents named by file path: one module per file, however alike two projects' paths end."""

from __future__ import annotations

from pathlib import Path

from jurybox.agents._loading import load_reference


def test_two_projects_files_of_the_same_name_are_two_modules(tmp_path: Path) -> None:
    answers = []
    for project, answer in (("one", "from one"), ("two", "from two")):
        folder = tmp_path / project / "project" / "agents"
        folder.mkdir(parents=True)
        (folder / "echo.py").write_text(f"def respond(message, session_id):\n    return {answer!r}\n")
        respond = load_reference("agents/echo.py:respond", field="agent.python", base_dir=folder.parent)
        answers.append(respond("hi", "s"))
    # Before, both were "_jurybox_agent_project_agents_echo": the second suite ran the first one's agent.
    assert answers == ["from one", "from two"]


def test_the_same_file_is_one_module(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("CALLS = []\ndef respond(message, session_id):\n    return 'ok'\n")
    first = load_reference("agent.py:CALLS", field="agent.python", base_dir=tmp_path)
    again = load_reference(str(tmp_path / "agent.py") + ":CALLS", field="agent.python", base_dir=None)
    assert first is again
