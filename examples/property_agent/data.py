"""The property platform's SQLite database: schema and deterministic seed data.

The data is generated from a fixed seed, so every fresh database holds the
same listings, bookings and monthly revenue, and suites can assert on them.
"Today" for the platform is ``AS_OF`` (stored in the ``meta`` table): months
before it are realized revenue, bookings after it are upcoming.
"""

from __future__ import annotations

import calendar
import random
import sqlite3
from dataclasses import dataclass
from datetime import date, timedelta

AS_OF = date(2026, 7, 1)
SEED_START = date(2026, 1, 1)
SEED_END = date(2026, 8, 31)
SCHEMA_VERSION = "1"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS listings (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    property_type TEXT NOT NULL,
    address TEXT NOT NULL,
    city TEXT NOT NULL,
    bedrooms INTEGER NOT NULL,
    bathrooms REAL NOT NULL,
    max_guests INTEGER NOT NULL,
    nightly_rate REAL NOT NULL,
    cleaning_fee REAL NOT NULL,
    rating REAL NOT NULL,
    status TEXT NOT NULL,
    amenities TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bookings (
    id INTEGER PRIMARY KEY,
    listing_id INTEGER NOT NULL REFERENCES listings(id),
    guest_name TEXT NOT NULL,
    guests INTEGER NOT NULL,
    check_in TEXT NOT NULL,
    check_out TEXT NOT NULL,
    nights INTEGER NOT NULL,
    total REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('completed', 'confirmed', 'cancelled')),
    channel TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bookings_listing ON bookings(listing_id, check_in);
CREATE TABLE IF NOT EXISTS revenue (
    listing_id INTEGER NOT NULL REFERENCES listings(id),
    month TEXT NOT NULL,
    gross REAL NOT NULL,
    nights_booked INTEGER NOT NULL,
    nights_available INTEGER NOT NULL,
    bookings INTEGER NOT NULL,
    PRIMARY KEY (listing_id, month)
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content TEXT NOT NULL,
    tool_calls TEXT,
    tool_call_id TEXT,
    name TEXT,
    meta TEXT,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_id, id);
"""


@dataclass(frozen=True)
class Listing:
    id: int
    name: str
    property_type: str
    address: str
    city: str
    bedrooms: int
    bathrooms: float
    max_guests: int
    nightly_rate: float
    cleaning_fee: float
    rating: float
    amenities: str
    # Chance a free night starts a stay, by month: the seasons differ per property.
    demand: tuple[float, ...]


LISTINGS = (
    Listing(
        1,
        "Beach House",
        "house",
        "214 Seabright Ave",
        "Santa Cruz, CA",
        3,
        2.0,
        8,
        320.0,
        150.0,
        4.9,
        "ocean view, hot tub, free parking, outdoor shower, Wi-Fi",
        (0.12, 0.14, 0.18, 0.22, 0.30, 0.45, 0.55, 0.55),
    ),
    Listing(
        2,
        "Mountain Cabin",
        "cabin",
        "88 Pine Ridge Rd",
        "South Lake Tahoe, CA",
        2,
        1.0,
        6,
        210.0,
        110.0,
        4.8,
        "wood fireplace, sauna, ski storage, mountain view, Wi-Fi",
        (0.45, 0.45, 0.35, 0.18, 0.14, 0.25, 0.35, 0.35),
    ),
    Listing(
        3,
        "City Apartment",
        "apartment",
        "1450 Valencia St, Apt 3",
        "San Francisco, CA",
        1,
        1.0,
        3,
        180.0,
        80.0,
        4.6,
        "dedicated workspace, washer/dryer, near BART, fast Wi-Fi",
        (0.35, 0.35, 0.38, 0.38, 0.40, 0.42, 0.40, 0.40),
    ),
)

GUESTS = (
    "Sofia Martinez",
    "James Chen",
    "Priya Shah",
    "Liam O'Connor",
    "Amara Okafor",
    "Noah Fischer",
    "Mei Tanaka",
    "Lucas Almeida",
    "Hannah Cohen",
    "Diego Ramirez",
    "Chloe Dubois",
    "Ethan Walker",
    "Aisha Rahman",
    "Oliver Brown",
    "Elena Rossi",
    "Mateo Silva",
    "Grace Kim",
    "Samuel Adeyemi",
)
CHANNELS = ("Airbnb", "Vrbo", "Direct", "Booking.com")


def month_key(day: date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def days_in_month(key: str) -> int:
    year, month = (int(part) for part in key.split("-"))
    return calendar.monthrange(year, month)[1]


@dataclass(frozen=True)
class Booking:
    id: int
    listing_id: int
    guest_name: str
    guests: int
    check_in: date
    check_out: date
    total: float
    status: str
    channel: str

    @property
    def nights(self) -> int:
        return (self.check_out - self.check_in).days

    def row(self) -> tuple[object, ...]:
        return (
            self.id,
            self.listing_id,
            self.guest_name,
            self.guests,
            self.check_in.isoformat(),
            self.check_out.isoformat(),
            self.nights,
            self.total,
            self.status,
            self.channel,
        )


def _generate_bookings(rng: random.Random) -> list[Booking]:
    bookings: list[Booking] = []
    for listing in LISTINGS:
        day = SEED_START
        while day <= SEED_END:
            if rng.random() >= listing.demand[day.month - 1]:
                day += timedelta(days=1)
                continue
            check_out = min(day + timedelta(days=rng.randint(2, 7)), SEED_END + timedelta(days=1))
            nights = (check_out - day).days
            cancelled = rng.random() < 0.06
            # A stay still running on AS_OF is paid out at checkout, so it is not realized yet.
            status = "cancelled" if cancelled else "completed" if check_out <= AS_OF else "confirmed"
            bookings.append(
                Booking(
                    id=len(bookings) + 1,
                    listing_id=listing.id,
                    guest_name=rng.choice(GUESTS),
                    guests=rng.randint(1, listing.max_guests),
                    check_in=day,
                    check_out=check_out,
                    total=round(nights * listing.nightly_rate + listing.cleaning_fee, 2),
                    status=status,
                    channel=rng.choice(CHANNELS),
                )
            )
            # A cancelled stay frees its nights; a kept one blocks them, plus a turnover day now and then.
            day = day + timedelta(days=1) if cancelled else check_out + timedelta(days=rng.randint(0, 2))
    return bookings


def realized_months() -> list[str]:
    """The months with realized revenue: from the first seeded month up to the one before AS_OF."""
    months: list[str] = []
    day = SEED_START
    while day < AS_OF:
        if month_key(day) not in months:
            months.append(month_key(day))
        day += timedelta(days=1)
    return months


def _monthly_revenue(bookings: list[Booking]) -> list[tuple[object, ...]]:
    """Realized revenue per listing and month: each night where it falls, the cleaning fee at check-in."""
    by_id = {listing.id: listing for listing in LISTINGS}
    gross: dict[tuple[int, str], float] = {}
    nights: dict[tuple[int, str], int] = {}
    stays: dict[tuple[int, str], int] = {}
    for listing in LISTINGS:
        for key in realized_months():
            gross[(listing.id, key)], nights[(listing.id, key)], stays[(listing.id, key)] = 0.0, 0, 0
    for booking in bookings:
        if booking.status != "completed":
            continue
        listing = by_id[booking.listing_id]
        first = (listing.id, month_key(booking.check_in))
        gross[first] += listing.cleaning_fee
        stays[first] += 1
        night = booking.check_in
        while night < booking.check_out:
            slot = (listing.id, month_key(night))
            gross[slot] += listing.nightly_rate
            nights[slot] += 1
            night += timedelta(days=1)
    return [
        (
            listing_id,
            key,
            round(gross[(listing_id, key)], 2),
            nights[(listing_id, key)],
            days_in_month(key),
            stays[(listing_id, key)],
        )
        for listing_id, key in sorted(gross)
    ]


def ensure_database(connection: sqlite3.Connection) -> None:
    """Create the schema and seed it once; safe when several threads or processes open the file at once."""
    connection.executescript(SCHEMA)
    connection.execute("BEGIN IMMEDIATE")
    try:
        seeded = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if seeded is None:
            _seed(connection)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def _seed(connection: sqlite3.Connection) -> None:
    rng = random.Random(20260701)
    connection.executemany(
        "INSERT INTO listings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?)",
        [
            (
                item.id,
                item.name,
                item.property_type,
                item.address,
                item.city,
                item.bedrooms,
                item.bathrooms,
                item.max_guests,
                item.nightly_rate,
                item.cleaning_fee,
                item.rating,
                item.amenities,
            )
            for item in LISTINGS
        ],
    )
    bookings = _generate_bookings(rng)
    connection.executemany("INSERT INTO bookings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [b.row() for b in bookings])
    connection.executemany("INSERT INTO revenue VALUES (?, ?, ?, ?, ?, ?)", _monthly_revenue(bookings))
    connection.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("schema_version", SCHEMA_VERSION), ("as_of", AS_OF.isoformat()), ("currency", "USD")],
    )
