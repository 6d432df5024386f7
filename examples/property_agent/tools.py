"""The assistant's tools: what both the built-in policy and a model call to read the platform's data.

Each tool takes JSON-friendly arguments and returns a JSON-friendly dict.
``TOOL_SCHEMAS`` describes them to an OpenAI-compatible model; ``call_tool``
runs one by name and turns bad arguments into an ``{"error": ...}`` result
the model can read and correct.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

from examples.property_agent.store import PropertyStore

MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


class ToolInputError(ValueError):
    """The arguments a tool was called with are wrong; the message says how."""


def _listing_id(value: Any, store: PropertyStore, *, required: bool) -> int | None:
    if value is None:
        if required:
            raise ToolInputError("listing_id is required; call get_listings to see the ids")
        return None
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit():
        raise ToolInputError(f"listing_id must be an integer id, got {value!r}")
    listing_id = int(value)
    if store.listing(listing_id) is None:
        ids = ", ".join(str(row["id"]) for row in store.listings())
        raise ToolInputError(f"there is no listing {listing_id}; valid ids: {ids}")
    return listing_id


def _occupancy(rows: list[dict[str, Any]]) -> dict[str, Any]:
    booked = sum(row["nights_booked"] for row in rows)
    available = sum(row["nights_available"] for row in rows)
    return {
        "nights_booked": booked,
        "nights_available": available,
        "rate": round(booked / available, 4) if available else None,
    }


def get_listings(store: PropertyStore) -> dict[str, Any]:
    """All listings on the account, in listing order."""
    keys = ("id", "name", "property_type", "city", "bedrooms", "max_guests", "nightly_rate", "rating", "status")
    return {"listings": [{key: row[key] for key in keys} for row in store.listings()]}


def get_listing_details(store: PropertyStore, listing_id: Any = None) -> dict[str, Any]:
    """One listing in full, with occupancy (last 3 realized months and year to date) and upcoming stays."""
    identifier = _listing_id(listing_id, store, required=True)
    assert identifier is not None
    listing = store.listing(identifier)
    assert listing is not None
    months = store.revenue_months()
    recent = store.revenue(listing_id=identifier, start_month=months[-3], end_month=months[-1])
    year = months[-1][:4]
    ytd = store.revenue(listing_id=identifier, start_month=f"{year}-01", end_month=months[-1])
    today = store.as_of().isoformat()
    confirmed = store.bookings(listing_id=identifier, status="confirmed", start=store.as_of())
    current = next((row for row in confirmed if row["check_in"] < today), None)
    upcoming = [row for row in confirmed if row["check_in"] >= today]
    next_stay = upcoming[0] if upcoming else None
    stay_keys = ("guest_name", "check_in", "check_out", "nights", "guests")
    return {
        "listing": {**listing, "amenities": [a.strip() for a in listing["amenities"].split(",")]},
        "occupancy": {
            "last_3_months": {"start_month": months[-3], "end_month": months[-1], **_occupancy(recent)},
            "year_to_date": {"start_month": f"{year}-01", "end_month": months[-1], **_occupancy(ytd)},
        },
        "upcoming_bookings": len(upcoming),
        "current_stay": {key: current[key] for key in stay_keys} if current else None,
        "next_check_in": {key: next_stay[key] for key in stay_keys} if next_stay else None,
        "as_of": store.as_of().isoformat(),
    }


def get_bookings(
    store: PropertyStore,
    listing_id: Any = None,
    status: str | None = None,
    start_date: str | None = None,
    end_date: str | None = None,
) -> dict[str, Any]:
    """Bookings, optionally for one listing, one status, and stays overlapping a date range."""
    identifier = _listing_id(listing_id, store, required=False)
    if status is not None and status not in ("completed", "confirmed", "cancelled"):
        raise ToolInputError(f"status must be completed, confirmed or cancelled, got {status!r}")
    start = _date(start_date, "start_date")
    end = _date(end_date, "end_date")
    rows = store.bookings(listing_id=identifier, status=status, start=start, end=end)
    keys = ("id", "listing_id", "listing", "guest_name", "guests", "check_in", "check_out", "nights", "total", "status")
    return {
        "bookings": [{key: row[key] for key in keys} for row in rows],
        "count": len(rows),
        "total": round(sum(row["total"] for row in rows), 2),
        "as_of": store.as_of().isoformat(),
    }


def get_revenue(
    store: PropertyStore,
    listing_id: Any = None,
    start_month: str | None = None,
    end_month: str | None = None,
) -> dict[str, Any]:
    """Realized revenue and occupancy for months ``start_month..end_month`` (``YYYY-MM``), per listing and month."""
    identifier = _listing_id(listing_id, store, required=False)
    if start_month is None:
        raise ToolInputError("start_month is required (YYYY-MM)")
    end_month = end_month or start_month
    for name, value in (("start_month", start_month), ("end_month", end_month)):
        if not isinstance(value, str) or not MONTH.match(value):
            raise ToolInputError(f"{name} must look like 2026-06, got {value!r}")
    if end_month < start_month:
        raise ToolInputError(f"end_month {end_month} is before start_month {start_month}")
    rows = store.revenue(listing_id=identifier, start_month=start_month, end_month=end_month)
    available = store.revenue_months()
    by_listing: dict[str, list[dict[str, Any]]] = {}
    by_month: dict[str, float] = {}
    for row in rows:
        by_listing.setdefault(row["listing"], []).append(row)
        by_month[row["month"]] = round(by_month.get(row["month"], 0.0) + row["gross"], 2)
    return {
        "start_month": start_month,
        "end_month": end_month,
        "listing_id": identifier,
        "total": round(sum(row["gross"] for row in rows), 2),
        "currency": "USD",
        "by_listing": [
            {
                "listing": name,
                "listing_id": items[0]["listing_id"],
                "gross": round(sum(item["gross"] for item in items), 2),
                "stays": sum(item["bookings"] for item in items),
                **_occupancy(items),
            }
            for name, items in by_listing.items()
        ],
        "by_month": [{"month": month, "gross": gross} for month, gross in by_month.items()],
        "months_with_data": [available[0], available[-1]] if available else [],
    }


def _date(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise ToolInputError(f"{name} must be a date like 2026-07-01, got {value!r}") from None


TOOLS: Mapping[str, Callable[..., dict[str, Any]]] = {
    "get_listings": get_listings,
    "get_listing_details": get_listing_details,
    "get_bookings": get_bookings,
    "get_revenue": get_revenue,
}

_LISTING_ID = {"type": "integer", "description": "The listing's id, from get_listings."}
_MONTH = {"type": "string", "description": "A month as YYYY-MM, e.g. 2026-06.", "pattern": r"^\d{4}-\d{2}$"}

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_listings",
            "description": "List every property on the account: id, name, city, bedrooms, nightly rate, rating.",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_listing_details",
            "description": (
                "Full details of one listing: address, rooms, fees, amenities, occupancy over the last 3 months "
                "and year to date, upcoming bookings and the next check-in."
            ),
            "parameters": {
                "type": "object",
                "properties": {"listing_id": _LISTING_ID},
                "required": ["listing_id"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_bookings",
            "description": (
                "Bookings, optionally filtered by listing, status (completed, confirmed = upcoming, cancelled) "
                "and stays overlapping a date range."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "listing_id": _LISTING_ID,
                    "status": {"type": "string", "enum": ["completed", "confirmed", "cancelled"]},
                    "start_date": {"type": "string", "description": "YYYY-MM-DD, inclusive."},
                    "end_date": {"type": "string", "description": "YYYY-MM-DD, exclusive."},
                },
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_revenue",
            "description": (
                "Realized revenue and occupancy per listing and month for a range of months. "
                "Omit listing_id for the whole portfolio."
            ),
            "parameters": {
                "type": "object",
                "properties": {"listing_id": _LISTING_ID, "start_month": _MONTH, "end_month": _MONTH},
                "required": ["start_month"],
                "additionalProperties": False,
            },
        },
    },
]


def call_tool(store: PropertyStore, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Run a tool by name; an unknown tool or bad arguments give ``{"error": ...}`` instead of raising."""
    tool = TOOLS.get(name)
    if tool is None:
        return {"error": f"unknown tool {name!r}; available: {', '.join(TOOLS)}"}
    try:
        return tool(store, **dict(arguments))
    except TypeError as exc:
        return {"error": f"bad arguments for {name}: {exc}"}
    except ToolInputError as exc:
        return {"error": str(exc)}
