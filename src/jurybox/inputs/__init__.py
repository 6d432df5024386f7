"""Reading what users and tools hand jurybox, in memory proportional to its size and nesting it may not exceed.

Every YAML input (suites, seed front matter, cassettes, labelled sets, stub
scripts, suite files imported into the store, the dashboard's YAML boxes) is
read by ``read_yaml``; cassettes are then checked field by field by
``read_cassette``. JSON and TOML, which need nothing beyond the standard
library, are read by ``jurybox.core.read_json`` and ``jurybox.core.read_toml``.
"""

from jurybox.inputs._cassette import CASSETTE_TAGS, CassetteError, read_cassette
from jurybox.inputs._errors import InputError
from jurybox.inputs._files import read_text
from jurybox.inputs._lines import Lines, PathKey
from jurybox.inputs._yaml import YamlDocument, read_yaml
from jurybox.inputs._yaml_values import TagConstructors

__all__ = [
    "CASSETTE_TAGS",
    "CassetteError",
    "InputError",
    "Lines",
    "PathKey",
    "TagConstructors",
    "YamlDocument",
    "read_cassette",
    "read_text",
    "read_yaml",
]
