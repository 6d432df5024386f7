"""The limits every input jurybox reads is held to: size, nesting, values and alias expansion.

Suites, seeds, cassettes, labelled sets, recorded replies, ``jurybox check``
inputs, stub scripts, stored-suite imports, the dashboard's YAML boxes and
answers under test are all read within these (YAML by ``jurybox.inputs.read_yaml``,
JSON and TOML by ``jurybox.core.read_json`` and ``read_toml``), and refused with
an error naming the file and line, before anything big or deep is built.
"""

from __future__ import annotations

#: Input files jurybox reads (suites, seeds, cassettes, stub scripts, imports) are refused above this.
MAX_INPUT_BYTES = 50 * 1024 * 1024
#: Deepest nesting of lists and mappings (a scalar at the top is level 1 in YAML).
MAX_INPUT_DEPTH = 100
#: Values one document may hold (a list's items, a mapping's keys and values): about 150,000 cases
#: written in a suite file. Built as Python values that is a few hundred MB; more goes in a cases_file.
MAX_INPUT_NODES = 2_000_000
#: Aliases may repeat parts of a document, but its expansion may not exceed this many values
#: or ``MAX_ALIAS_GROWTH`` times the values actually written in it, whichever is more.
MAX_EXPANDED_NODES = 100_000
MAX_ALIAS_GROWTH = 10
