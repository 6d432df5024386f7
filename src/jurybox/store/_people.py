"""Dashboard users, their logins and the audit log of every write they make.

A user logs in with a token made by ``jurybox web add-user``; the store keeps
only the token's SHA-256 (a token is 32 random bytes, so a fast hash is enough:
there is nothing to guess), and the same for login session ids. Sessions live
in the store, so a server restart logs nobody out and a killed server loses
nothing. Every write through the dashboard is one audit row.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from jurybox.store._cases import now
from jurybox.store._errors import StoreError
from jurybox.store._json import db_jsonable
from jurybox.store._models import as_utc
from jurybox.store._repository import Repository
from jurybox.store._schema import audit_log_table, users_table, web_sessions_table

Role = Literal["viewer", "editor", "admin", "ingest"]
ROLES: tuple[Role, ...] = ("viewer", "editor", "admin")
"""Viewers read; editors write cases, start runs and review; admins may also change a suite's agent and judge model."""
INGEST_ROLE: Role = "ingest"
"""Senders of production traces (``POST /v1/traces``): that and nothing else, not even reading the dashboard."""
ALL_ROLES: tuple[Role, ...] = (*ROLES, INGEST_ROLE)

SESSION_LIFETIME = timedelta(hours=12)
MAX_NAME = 64


def token_hash(token: str) -> str:
    """What the store keeps of a token or a session id."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class User:
    """A dashboard user.

    Attributes:
        id: Row id.
        name: Login name, shown as the author of edits and reviews.
        role: ``viewer``, ``editor`` or ``admin``.
        disabled: A disabled user cannot log in; their edits and reviews stay.
        created_at: When they were added.
    """

    id: int
    name: str
    role: Role
    disabled: bool = False
    created_at: datetime | None = None

    def may(self, needed: Role) -> bool:
        """Whether this user's role is ``needed`` or above."""
        if self.disabled:
            return False
        if INGEST_ROLE in (self.role, needed):
            return self.role == needed  # off the ladder: an ingest token sends traces only
        return ROLES.index(self.role) >= ROLES.index(needed)


@dataclass(frozen=True)
class Login:
    """A live login: who, and the CSRF token every form of theirs must carry."""

    user: User
    csrf_token: str
    expires_at: datetime


@dataclass(frozen=True)
class AuditEntry:
    """One write: who did what to which thing, and the details."""

    id: int
    actor: str
    action: str
    target: str
    detail: Mapping[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None


class UserRepository(Repository):
    """The ``users``, ``web_sessions`` and ``audit_log`` tables."""

    def add_user(self, name: str, role: Role = "editor") -> str:
        """Add a user and return their login token (shown once: the store keeps only its hash).

        Raises:
            ValueError: a bad name or role.
            StoreError: the name is taken.
        """
        clean = name.strip()
        if not clean or len(clean) > MAX_NAME or not all(c.isalnum() or c in "._-@" for c in clean):
            raise ValueError(f"a user name is 1-{MAX_NAME} letters, digits or . _ - @ (got {name!r})")
        if role not in ALL_ROLES:
            raise ValueError(f"role must be one of {', '.join(ALL_ROLES)} (got {role!r})")
        token = secrets.token_urlsafe(32)
        try:
            with self._write() as connection:
                connection.execute(
                    insert(users_table).values(
                        name=clean, role=role, token_hash=token_hash(token), disabled=False, created_at=now()
                    )
                )
                self._audit(connection, "jurybox web add-user", "user.add", clean, {"role": role})
        except IntegrityError:
            raise StoreError(f"there is already a user named {clean!r} in store {self.url}") from None
        return token

    def users(self) -> list[User]:
        with self._read() as connection:
            rows = connection.execute(select(users_table).order_by(users_table.c.name)).all()
        return [_user(row) for row in rows]

    def user_count(self) -> int:
        """Users who can log in (the server refuses a public address while this is 0)."""
        with self._read() as connection:
            query = select(func.count()).select_from(users_table).where(users_table.c.disabled.is_(False))
            return int(connection.execute(query).scalar_one())

    def disable_user(self, name: str, *, actor: str) -> None:
        """Stop ``name`` logging in and end their sessions (their edits and reviews stay)."""
        with self._write() as connection:
            user_id = connection.execute(select(users_table.c.id).where(users_table.c.name == name)).scalar()
            if user_id is None:
                raise StoreError(f"no user named {name!r} in store {self.url}")
            connection.execute(update(users_table).where(users_table.c.id == user_id).values(disabled=True))
            connection.execute(delete(web_sessions_table).where(web_sessions_table.c.user_id == user_id))
            self._audit(connection, actor, "user.disable", name, {})

    def log_in(self, token: str, *, lifetime: timedelta = SESSION_LIFETIME) -> tuple[str, Login] | None:
        """A new session for the user whose token this is: (session id for the cookie, the login); None if unknown."""
        if not token or len(token) > 256:
            return None
        with self._write() as connection:
            row = connection.execute(
                select(users_table).where(
                    users_table.c.token_hash == token_hash(token),
                    users_table.c.disabled.is_(False),
                    users_table.c.role != INGEST_ROLE,  # a trace sender's token opens no dashboard session
                )
            ).one_or_none()
            if row is None:
                return None
            session_id, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
            started = now()
            expires = started + lifetime
            connection.execute(
                insert(web_sessions_table).values(
                    id_hash=token_hash(session_id),
                    user_id=row.id,
                    csrf_token=csrf,
                    created_at=started,
                    expires_at=expires,
                )
            )
            # Expired sessions go whenever someone logs in: the table never grows without bound.
            connection.execute(delete(web_sessions_table).where(web_sessions_table.c.expires_at < started))
            self._audit(connection, row.name, "login", row.name, {})
        return session_id, Login(_user(row), csrf, expires)

    def user_for_token(self, token: str) -> User | None:
        """The enabled user whose login token this is (an API client's bearer token), or None."""
        if not token or len(token) > 256:
            return None
        with self._read() as connection:
            row = connection.execute(
                select(users_table).where(
                    users_table.c.token_hash == token_hash(token), users_table.c.disabled.is_(False)
                )
            ).one_or_none()
        return None if row is None else _user(row)

    def login(self, session_id: str) -> Login | None:
        """The live login behind a session cookie; None when unknown, expired or the user was disabled."""
        if not session_id or len(session_id) > 256:
            return None
        with self._read() as connection:
            row = connection.execute(
                select(users_table, web_sessions_table.c.csrf_token, web_sessions_table.c.expires_at)
                .join(web_sessions_table, web_sessions_table.c.user_id == users_table.c.id)
                .where(web_sessions_table.c.id_hash == token_hash(session_id))
            ).one_or_none()
        if row is None or row.disabled:
            return None
        expires = as_utc(row.expires_at)
        if expires is None or expires <= now():
            return None
        return Login(_user(row), row.csrf_token, expires)

    def log_out(self, session_id: str) -> None:
        with self._write() as connection:
            connection.execute(delete(web_sessions_table).where(web_sessions_table.c.id_hash == token_hash(session_id)))

    def audit(self, actor: str, action: str, target: str, detail: Mapping[str, Any] | None = None) -> None:
        """Record one write (the dashboard calls this in the same request as the write)."""
        with self._write() as connection:
            self._audit(connection, actor, action, target, detail or {})

    def audit_entries(self, *, limit: int = 100, before: int | None = None) -> list[AuditEntry]:
        """The newest entries first; ``before`` (an entry id) pages back."""
        query = select(audit_log_table).order_by(audit_log_table.c.id.desc()).limit(max(1, min(limit, 1000)))
        if before is not None:
            query = query.where(audit_log_table.c.id < before)
        with self._read() as connection:
            rows = connection.execute(query).all()
        return [
            AuditEntry(row.id, row.actor, row.action, row.target, row.detail or {}, as_utc(row.created_at))
            for row in rows
        ]

    @staticmethod
    def _audit(connection: Any, actor: str, action: str, target: str, detail: Mapping[str, Any]) -> None:
        connection.execute(
            insert(audit_log_table).values(
                actor=actor[:255],
                action=action[:64],
                target=target[:1024],
                detail=db_jsonable(dict(detail)),
                created_at=now(),
            )
        )


def _user(row: Any) -> User:
    return User(row.id, row.name, row.role, bool(row.disabled), as_utc(row.created_at))
