"""Carrying the session id to an OpenAI-compatible service, so a service that keeps state can key it.

An OpenAI endpoint is stateless, but the application behind one often is not:
it keeps the conversation (or the user's cart, or a booking in progress) per
session. The adapter sends the session id with every request -- as the
``user`` field, as a header, or wherever a ``{session_id}`` template in
``extra_body`` or ``headers`` puts it -- so such a service sees one id per
conversation, the same id after revival, and never another case's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from jurybox.agents._errors import TargetConfigError
from jurybox.agents._http import fill_placeholders

SendAs = Literal["user", "header", "none"]
SEND_AS: tuple[SendAs, ...] = ("user", "header", "none")
DEFAULT_HEADER = "X-Session-Id"
_KEYS = frozenset({"send_as", "header"})


@dataclass(frozen=True)
class SessionCarrier:
    """How the session id travels with each request.

    Attributes:
        send_as: ``user`` (the request's standard ``user`` field; the default,
            since every OpenAI-compatible server accepts it), ``header`` (the
            ``header`` below) or ``none`` (only where a ``{session_id}``
            template in ``extra_body`` or ``headers`` puts it).
        header: The header name for ``send_as: header``.
    """

    send_as: SendAs = "user"
    header: str = DEFAULT_HEADER

    def body_fields(self, session_id: str) -> dict[str, Any]:
        return {"user": session_id} if self.send_as == "user" else {}

    def headers(self, session_id: str) -> dict[str, str]:
        return {self.header: session_id} if self.send_as == "header" else {}


def fill_session(template: Any, session_id: str) -> Any:
    """``{session_id}`` replaced at any depth of ``template`` (keys, values, lists); other text untouched."""
    return fill_placeholders(template, {"{session_id}": session_id})


def request_parts(
    carrier: SessionCarrier,
    session_id: str,
    *,
    extra_body: Mapping[str, Any],
    headers: Mapping[str, str],
) -> tuple[dict[str, Any], dict[str, str]]:
    """The body fields and headers one request sends: the templates filled, then the carrier's own field.

    A template that already sets ``user`` (``extra_body: {user: "team-{session_id}"}``) wins over
    the carrier, so a service that wants a prefixed id gets it.
    """
    body = {**carrier.body_fields(session_id), **fill_session(dict(extra_body), session_id)}
    sent_headers = {**carrier.headers(session_id), **fill_session(dict(headers), session_id)}
    return body, sent_headers


def session_carrier(value: Any, *, field: str) -> SessionCarrier:
    """Validate ``session:`` -- ``user``, ``header``, ``none`` or ``{send_as, header}``; errors name the field."""
    if value is None:
        return SessionCarrier()
    if isinstance(value, str):
        value = {"send_as": value}
    if not isinstance(value, Mapping):
        raise TargetConfigError(
            f"{field}: expected one of {', '.join(SEND_AS)} or a mapping {{send_as, header}}, got {value!r}"
        )
    unknown = sorted(str(k) for k in value if k not in _KEYS)
    if unknown:
        raise TargetConfigError(f"{field}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(_KEYS))}")
    send_as = value.get("send_as", "header" if "header" in value else "user")
    if send_as not in SEND_AS:
        raise TargetConfigError(f"{field}.send_as: expected one of {', '.join(SEND_AS)}, got {send_as!r}")
    header = value.get("header", DEFAULT_HEADER)
    if not isinstance(header, str) or not header or not all(c.isalnum() or c in "-_" for c in header):
        raise TargetConfigError(f"{field}.header: expected a header name such as {DEFAULT_HEADER}, got {header!r}")
    return SessionCarrier(send_as=send_as, header=header)
