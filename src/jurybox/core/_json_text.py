"""Compact JSON text made by the C encoder built once, instead of once per ``json.dumps`` call.

``json.dumps`` with any option set builds a new ``JSONEncoder`` and a new C encoder on
every call: about 3 us, a third of encoding a judge's request body. The store's JSON
columns and the provider request bodies are encoded thousands of times a run with the
same options, so each keeps one encoder from ``compact_encoder``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def compact_encoder(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=default)``, reusable.

    Built without the circular-reference check, whose markers cost more than a tenth of
    encoding a nested value: a cyclic value raises RecursionError instead of ValueError.
    The text is the public encoder's, byte for byte; on an interpreter without the C
    accelerator (or whose private encoder takes other arguments) it is the public encoder.
    """
    public = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=default)
    # Not in typeshed; None on an interpreter without the _json accelerator.
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_encoder is None:
        return public.encode
    try:
        encode = make_encoder(
            None,  # the markers of the circular-reference check
            public.default,
            json.encoder.encode_basestring,  # ensure_ascii=False's
            public.indent,
            public.key_separator,
            public.item_separator,
            public.sort_keys,
            public.skipkeys,
            public.allow_nan,
        )
    except TypeError:
        return public.encode

    def encode_text(value: Any) -> str:
        return "".join(encode(value, 0))

    probe = {"a": [1, 2.5, None, True, "é\u2028"], "b": {}}
    if encode_text(probe) != public.encode(probe):  # same text as the public encoder, or not used at all
        return public.encode
    return encode_text
