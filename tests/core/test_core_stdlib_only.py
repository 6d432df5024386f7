"""jurybox.core must import nothing outside the standard library."""

import json
import subprocess
import sys

PROBE = """
import json, sys
before = set(sys.modules)
import jurybox.core, jurybox
from jurybox import Context, Judgment, Status, Check, judge, Jury, Cascade, Tier, evaluate, aevaluate
new = sorted(set(sys.modules) - before)
print(json.dumps(new))
"""


def test_core_imports_only_the_standard_library() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    third_party = sorted(
        {name.split(".")[0] for name in loaded}
        - set(sys.stdlib_module_names)
        - {"jurybox", "_distutils_hack", "__future__"}
    )
    third_party = [n for n in third_party if not n.startswith("_")]
    assert third_party == [], f"jurybox.core pulled in third-party modules: {third_party}"
    assert "jurybox.core" in loaded


def test_public_names_are_exported() -> None:
    import jurybox

    for name in ["Context", "Judgment", "Status", "Check", "judge", "Jury", "Cascade", "Tier", "evaluate", "aevaluate"]:
        assert name in jurybox.__all__
        assert getattr(jurybox, name) is not None
