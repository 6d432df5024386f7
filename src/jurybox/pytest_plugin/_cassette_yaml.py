"""Cassette YAML read with limits: size, nesting depth and alias expansion are checked before vcrpy builds it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from jurybox.core import MAX_INPUT_BYTES, tree_limit_breach, yaml_children

# libyaml's composer when it is built in; composing builds nodes only, and aliases stay shared.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CassetteLimitError(ValueError):
    """A cassette too big, too deep or too alias-expanding to read; the message names file and line."""


def check_yaml_limits(text: str, where: str) -> yaml.Node | None:
    """Compose ``text`` and check it against the input limits; the composed root (None when empty).

    Raises:
        CassetteLimitError: a limit is broken, naming ``where`` and the line.
        yaml.YAMLError: the text is not YAML.
    """
    if len(text) > MAX_INPUT_BYTES:
        raise CassetteLimitError(f"{where}: over the {MAX_INPUT_BYTES // 2**20} MB input limit")
    root = yaml.compose(text, Loader=_Loader)
    if root is not None:
        breach = tree_limit_breach(root, yaml_children)
        if breach is not None:
            raise CassetteLimitError(f"{where}:{breach.node.start_mark.line + 1}: refused: {breach.reason}")
    return root


class BoundedYamlSerializer:
    """vcrpy's YAML serializer for one cassette file, with the limits checked before loading.

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
        from vcr.serializers import yamlserializer

        check_yaml_limits(cassette_string, str(self.path))
        data = yamlserializer.deserialize(cassette_string)
        for interaction in data.get("interactions") or () if isinstance(data, dict) else ():
            if isinstance(interaction, dict):
                _from_parsed_body(interaction)
        return data


def _from_parsed_body(interaction: dict[str, Any]) -> None:
    """pydantic-ai's cassettes keep bodies as YAML data (``parsed_body``): turn them back into JSON text.

    Its serializer stores the decoded body, so the response's ``content-encoding`` (the body is
    no longer gzip) and ``content-length`` (the JSON text is not byte for byte the original) go.
    """
    request = interaction.get("request")
    if isinstance(request, dict) and "parsed_body" in request:
        request["body"] = json.dumps(request.pop("parsed_body"), ensure_ascii=False)
    response = interaction.get("response")
    if isinstance(response, dict) and "parsed_body" in response:
        response["body"] = {"string": json.dumps(response.pop("parsed_body"), ensure_ascii=False)}
        headers = response.get("headers")
        if isinstance(headers, dict):
            for name in [n for n in headers if str(n).lower() in ("content-encoding", "content-length")]:
                del headers[name]
