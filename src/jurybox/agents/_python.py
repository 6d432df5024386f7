"""Python agents: a factory of agent objects, or a plain ``respond(message, session_id)`` function."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from jurybox.agents._adapter import AgentAdapter
from jurybox.agents._errors import AgentError, TargetConfigError
from jurybox.agents._lessons import current_lessons, lessons_payload
from jurybox.agents._loading import load_reference
from jurybox.agents._otel_capture import CAPTURE_CHOICES, Captured, SpanCapture, with_captured
from jurybox.agents._reply import AgentReply, coerce_reply
from jurybox.core import DaemonThreadPool

Kind = Literal["factory", "function"]
KINDS: tuple[Kind, ...] = ("factory", "function")


def _required_positional(fn: Callable[..., Any]) -> int | None:
    """How many positional arguments ``fn`` needs, or None when its signature cannot be read."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(
        1 for p in signature.parameters.values() if p.kind in positional and p.default is inspect.Parameter.empty
    )


def classify(obj: Any, *, field: str) -> Kind:
    """Tell a factory (a class or a callable taking no arguments) from a ``respond`` function (two arguments)."""
    if inspect.isclass(obj):
        return "factory"
    if not callable(obj):
        raise TargetConfigError(
            f"{field}: {obj!r} is not callable; expected a factory returning an agent with "
            "respond(message, session_id), or a function respond(message, session_id)"
        )
    required = _required_positional(obj)
    if required == 0:
        return "factory"
    if required == 2:
        return "function"
    raise TargetConfigError(
        f"{field}: {getattr(obj, '__qualname__', obj)!r} takes {required} required argument(s); expected a "
        "factory taking none, or respond(message, session_id). Set 'kind: factory' or 'kind: function' to say which."
    )


def _is_async(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    # An object whose __call__ is async (a callable class instance).
    return not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)


class _Session:
    """One session's agent object and the thread its sync methods run on.

    A sync agent object is created and called on one dedicated thread, so
    objects that must stay on their thread (an SQLite connection) work.
    """

    def __init__(self) -> None:
        self.agent: Any = None
        self.thread = DaemonThreadPool(1, thread_name_prefix="jurybox-agent")
        self.thread_stuck = False

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        if _is_async(fn):
            return await fn(*args)
        call = self.thread.submit(fn, *args)
        try:
            value = await asyncio.wrap_future(call)
        except asyncio.CancelledError:
            # Cancelled (a timeout) while the thread still runs the call: the thread is lost to it.
            self.thread_stuck = call.running()
            raise
        return await value if inspect.isawaitable(value) else value


def _with_lessons(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the case's lessons as its ``lessons=`` keyword, when it takes one and there are some.

    Read here, on the case's task, because a sync agent runs on a thread the context does not reach.
    """
    lessons = current_lessons()
    if not lessons or not _takes_lessons(fn):
        return fn
    if isinstance(fn, functools.partial) and "lessons" in fn.keywords:
        return fn  # the suite's agent.options set lessons themselves: theirs win
    payload = lessons_payload(lessons)
    if _is_async(fn):

        async def call_async(*args: Any) -> Any:
            return await fn(*args, lessons=payload)

        return call_async
    return functools.partial(fn, lessons=payload)


@functools.lru_cache(maxsize=256)
def _takes_lessons_cached(fn: Any) -> bool:
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    found = parameters.get("lessons")
    return found is not None and found.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _takes_lessons(fn: Any) -> bool:
    target = fn.func if isinstance(fn, functools.partial) else fn
    target = getattr(target, "__func__", target)  # a bound method: cache its function, not the agent object
    try:
        return _takes_lessons_cached(target)
    except TypeError:  # unhashable callable
        return False


class PythonTarget:
    """An agent written in Python, in this process.

    With a factory, each session gets its own agent object, made on first use;
    revival calls the object's ``close()`` (when it has one) and makes a new
    one on the next message, so only what the agent persisted survives. With a
    plain function there is no object to drop; revival calls the optional
    ``close_session`` function of the spec.
    """

    def __init__(
        self,
        obj: Any,
        *,
        name: str,
        kind: Kind | None = None,
        options: Mapping[str, Any] | None = None,
        close_session: Callable[[str], Any] | None = None,
        threads: int = 32,
        capture: str = "none",
    ) -> None:
        self.name = name
        # Options are factory keyword arguments, so a spec with options names a factory.
        self.kind: Kind = kind or ("factory" if options else classify(obj, field="agent.python"))
        if self.kind == "function" and options:
            raise TargetConfigError("agent.options: options are passed to a factory; a respond function takes none")
        self._obj = obj
        self._options = dict(options or {})
        self._close_session_fn = close_session
        self._sessions: dict[str, _Session] = {}
        self._creating: dict[str, asyncio.Lock] = {}
        # Sync respond functions run on this pool, not the loop's small default
        # one, so a hung agent does not starve other cases; its threads are
        # daemons, so a call that never returns does not keep the process alive.
        self._pool = DaemonThreadPool(threads, thread_name_prefix="jurybox-respond")
        if capture not in CAPTURE_CHOICES:
            raise TargetConfigError(f"agent.capture: expected one of {', '.join(CAPTURE_CHOICES)}, got {capture!r}")
        self._capture = SpanCapture.shared() if capture == "otel" else None

    async def respond(self, message: str, session_id: str) -> AgentReply:
        if self.kind == "function":
            value = await self._call_function(message, session_id)
        else:
            session = await self._session(session_id)
            respond = getattr(session.agent, "respond", None)
            if not callable(respond):
                raise AgentError(f"agent {self.name}: the object the factory made has no respond(message, session_id)")
            value = await session.run(self._captured(_with_lessons(respond)), message, session_id)
        if isinstance(value, Captured):
            return with_captured(coerce_reply(value.value, agent=self.name), value)
        return coerce_reply(value, agent=self.name)

    def _captured(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` run under ``capture: otel`` (its result a ``Captured``), or ``fn`` itself."""
        return self._capture.wrap(fn) if self._capture is not None else fn

    async def _call_function(self, message: str, session_id: str) -> Any:
        respond = self._captured(_with_lessons(self._obj))
        if _is_async(respond):
            return await respond(message, session_id)
        loop = asyncio.get_running_loop()
        value = await loop.run_in_executor(self._pool, respond, message, session_id)
        return await value if inspect.isawaitable(value) else value

    async def _session(self, session_id: str) -> _Session:
        lock = self._creating.setdefault(session_id, asyncio.Lock())
        async with lock:
            session = self._sessions.get(session_id)
            if session is None:
                session = _Session()
                try:
                    session.agent = await session.run(_with_lessons(functools.partial(self._obj, **self._options)))
                except Exception as exc:
                    session.thread.shutdown(wait=False)
                    raise AgentError(f"agent {self.name}: the factory raised {type(exc).__name__}: {exc}") from exc
                self._sessions[session_id] = session
            return session

    def holds_session(self, session_id: str) -> bool:
        """Whether closing ``session_id`` has anything to do (the runner skips the close, and its timer, when not)."""
        return (
            session_id in self._sessions
            or session_id in self._creating
            or (self.kind == "function" and self._close_session_fn is not None)
        )

    async def close_session(self, session_id: str) -> None:
        self._creating.pop(session_id, None)
        session = self._sessions.pop(session_id, None)
        if session is not None:
            try:
                close = getattr(session.agent, "close", None)
                # A hung call still holds the session's thread; close() would queue behind it forever.
                if callable(close) and not session.thread_stuck:
                    await session.run(close)
            finally:
                session.thread.shutdown(wait=False)
        if self.kind == "function" and self._close_session_fn is not None:
            value = self._close_session_fn(session_id)
            if inspect.isawaitable(value):
                await value

    async def aclose(self) -> None:
        errors: list[str] = []
        for session_id in list(self._sessions):
            try:
                await self.close_session(session_id)
            except Exception as exc:  # keep closing the others; report all at the end
                errors.append(f"{session_id}: {type(exc).__name__}: {exc}")
        self._pool.shutdown(wait=False)
        if errors:
            raise AgentError(f"agent {self.name}: closing sessions failed: {'; '.join(errors)}")

    def __repr__(self) -> str:
        return f"PythonTarget({self.name!r}, kind={self.kind!r}, sessions={len(self._sessions)})"


def python_target(spec: Mapping[str, Any], *, base_dir: Path | None) -> PythonTarget:
    """Build a PythonTarget from ``{python: "mod:attr", kind?, options?, close_session?, name?}``."""
    reference = spec["python"]
    obj = load_reference(reference, field="agent.python", base_dir=base_dir)
    kind = spec.get("kind")
    if kind is not None and kind not in KINDS:
        raise TargetConfigError(f"agent.kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    options = spec.get("options") or {}
    if not isinstance(options, Mapping):
        raise TargetConfigError(f"agent.options: expected a mapping of factory keyword arguments, got {options!r}")
    unknown = _options_not_taken(obj, options)
    if unknown:
        raise TargetConfigError(
            f"agent.options: {reference} takes no option(s) {', '.join(unknown)}; it takes: "
            f"{', '.join(_option_names(obj)) or 'none'}"
        )
    close_ref = spec.get("close_session")
    close = load_reference(close_ref, field="agent.close_session", base_dir=base_dir) if close_ref else None
    if close is not None and not callable(close):
        raise TargetConfigError(f"agent.close_session: {close_ref!r} is not callable")
    capture = spec.get("capture", "none")
    threads = spec.get("threads", 32)
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise TargetConfigError(f"agent.threads: expected a positive integer, got {threads!r}")
    return PythonTarget(
        obj,
        name=str(spec.get("name") or f"python:{reference}"),
        kind=kind,
        options=options,
        close_session=close,
        threads=threads,
        capture=capture,
    )


_HANDED = frozenset({"seeds", "lessons"})
"""Options jurybox itself hands a factory (seed records, lessons): checked where they are added."""


def _parameters(obj: Any) -> list[inspect.Parameter] | None:
    """The factory's parameters; None when they cannot be read (a builtin, a C extension)."""
    try:
        return list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return None


def _option_names(obj: Any) -> list[str]:
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in _parameters(obj) or () if p.kind in keyword and p.name not in _HANDED]


def _options_not_taken(obj: Any, options: Mapping[str, Any]) -> list[str]:
    """Options the factory's signature has no parameter for (a typo found while loading, not mid-run).

    A factory taking ``**kwargs`` takes anything; one whose signature cannot be read is trusted.
    """
    parameters = _parameters(obj)
    if not options or parameters is None or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return []
    taken = set(_option_names(obj)) | _HANDED
    return sorted(str(name) for name in options if name not in taken)


def _build(settings: Any, *, name: str | None, base_dir: Path | None, spec: Mapping[str, Any]) -> PythonTarget:
    return python_target(spec, base_dir=base_dir)  # its options sit beside the python: key


ADAPTER = AgentAdapter(
    build=_build,
    keys={
        "kind": {"enum": list(KINDS), "description": "What agent.python names (default: told from its signature)."},
        "options": {"type": "object", "description": "Keyword arguments for the agent factory."},
        "close_session": {"type": "string", "description": "module:attribute of a function(session_id) to call."},
        "threads": {"type": "integer", "minimum": 1, "description": "Threads for a synchronous agent (default 32)."},
        "capture": {
            "enum": list(CAPTURE_CHOICES),
            "description": "otel: read the round's tool calls and usage from the agent's own OpenTelemetry spans.",
        },
    },
    settings_mapping=False,
    settings_schema={
        "type": "string",
        "pattern": "^[^:]+:[^:]+$",
        "description": "The agent: 'package.module:attribute' or 'path/to/file.py:attribute'.",
    },
)
"""``agent: {python: "module:attribute", ...}``."""
