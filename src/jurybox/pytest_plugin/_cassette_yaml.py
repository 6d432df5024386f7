"""Cassette files read through jurybox's bounded reader: one clear error for a file vcrpy could not replay.

vcrpy's own loading reads the whole file before any limit, builds it with
PyYAML's composer (gigabytes for a big list, a RecursionError for deep
nesting), and lets a malformed interaction surface as a TypeError or KeyError
from inside vcrpy. Here the persister refuses a file over the size limit before
reading it, and the serializer hands vcrpy only what ``jurybox.inputs.read_cassette``
checked, so every problem is a ``CassetteError`` naming the file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurybox.inputs import CassetteError, InputError, read_cassette, read_text


class BoundedYamlSerializer:
    """vcrpy's YAML serializer for one cassette file, reading with jurybox's limits and checks.

    Args:
        path: The cassette file, named in errors.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def serialize(self, cassette_dict: dict[str, Any]) -> str:
        from vcr.serializers import yamlserializer

        text: str = yamlserializer.serialize(cassette_dict)
        return text

    def deserialize(self, cassette_string: str) -> Any:
        return read_cassette(cassette_string, str(self.path))


class BoundedPersister:
    """vcrpy's file persister, with the file's size checked before it is read and its encoding errors named."""

    @classmethod
    def load_cassette(cls, cassette_path: str | Path, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.serialize import deserialize

        path = Path(cassette_path)
        if not path.is_file():
            raise CassetteNotFoundError()
        try:
            text = read_text(path)
        except InputError as exc:
            raise CassetteError(exc.source, exc.line, exc.problem) from None
        if not text.strip():  # an empty file is recorded again, as vcrpy does
            raise CassetteNotFoundError()
        return deserialize(text, serializer)

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: dict[str, Any], serializer: Any) -> None:
        from vcr.persisters.filesystem import FilesystemPersister

        FilesystemPersister.save_cassette(cassette_path, cassette_dict, serializer)
