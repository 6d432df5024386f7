"""How well the cassette secret detector finds secrets, and what it flags in real traffic that holds none.

    .venv/bin/python benchmarks/secret_detection.py [--samples 20000] [--realdata /work/shared/realdata]

1. Random-looking tokens: the share of random strings ``looks_random`` misses, per alphabet
   (mixed-case letters and digits, base64url, base64, lower/upper case and digits, hex) and length.
2. Vendor keys in prose with no name before them ("I tried <key> but..."): the share of each
   generated vendor kind (tests/pytest_plugin/secret_corpus.py) a scrub leaves.
3. Real traffic, no secrets planted: what the lint reports in the 33 recorded cassettes of
   tests/data/cassettes/foreign, how many request and response bodies redaction changes, and
   what it flags in model replies and human-written text (tests/data/judge_outputs, plus every
   JSON file under --realdata when given).
4. Speed: megabytes of text per second through the detector.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import string
import sys
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from jurybox.pytest_plugin import ALL_RULES
from jurybox.pytest_plugin._lint import lint_file
from jurybox.pytest_plugin._randomness import looks_random
from jurybox.pytest_plugin._structure import Walker

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "tests" / "pytest_plugin"))

ALPHABETS = {
    "letters+digits": string.ascii_letters + string.digits,
    "base64url": string.ascii_letters + string.digits + "-_",
    "base64": string.ascii_letters + string.digits + "+/",
    "lower+digits": string.ascii_lowercase + string.digits,
    "upper+digits": string.ascii_uppercase + string.digits,
    "hex": "0123456789abcdef",
}
LENGTHS = (16, 20, 24, 32, 40, 64)


def random_token_misses(samples: int) -> None:
    rng = random.Random(32)
    print(f"1. random tokens missed by looks_random ({samples} per cell):")
    print(f"   {'alphabet':<16}" + "".join(f"{n:>9}" for n in LENGTHS))
    for name, alphabet in ALPHABETS.items():
        cells = []
        for size in LENGTHS:
            missed = sum(not looks_random("".join(rng.choice(alphabet) for _ in range(size))) for _ in range(samples))
            cells.append(f"{missed / samples:>9.2%}")
        print(f"   {name:<16}" + "".join(cells))


def vendor_keys_in_prose(samples: int) -> None:
    from secret_corpus import PROSE, VENDOR_KINDS, fake

    print(f"2. vendor keys left in prose with no name before them ({samples} per kind):")
    for kind in sorted(VENDOR_KINDS):
        left = 0
        for seed in range(samples):
            planted = fake(kind, seed)
            text = PROSE[seed % len(PROSE)].format(value=planted.value)
            left += planted.core in ALL_RULES.scrub(text)
        if left:
            print(f"   {kind:<24} {left / samples:.2%}")
    print("   (kinds not listed: none left)")


def _body(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("string")
    if isinstance(value, bytes):
        for opener in (gzip.decompress, zlib.decompress):
            try:
                value = opener(value)
                break
            except (OSError, zlib.error):
                continue
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def real_cassettes() -> None:
    cassettes = sorted((DATA / "cassettes" / "foreign").rglob("*.yaml"))
    findings = Counter(finding.pattern for path in cassettes for finding in lint_file(path))
    print(f"3a. lint over {len(cassettes)} real cassettes (nothing planted): {dict(findings.most_common())}")
    bodies = changed = 0
    kinds: Counter[str] = Counter()
    for path in cassettes:
        for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
            for side in ("request", "response"):
                part = interaction[side]
                raw = part.get("body", part.get("content"))
                body = json.dumps(part["parsed_body"]) if "parsed_body" in part else _body(raw)
                if body:
                    walker = Walker(ALL_RULES)
                    bodies += 1
                    if walker.body(body) != body:
                        changed += 1
                        kinds.update(hit.kind for hit in walker.hits)
    print(f"3b. redaction changed {changed} of {bodies} request/response bodies: {dict(kinds)}")


def _strings(value: Any, name: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, str(key))
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, name)
    elif isinstance(value, str):
        yield name, value


def _documents(path: Path) -> Iterator[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        yield from (json.loads(line) for line in text.splitlines() if line.strip())
    else:
        yield json.loads(text)


def real_text(folders: list[Path]) -> None:
    files = sorted(p for folder in folders for p in folder.rglob("*.json*") if p.suffix in (".json", ".jsonl"))
    strings = [pair for path in files for document in _documents(path) for pair in _strings(document)]
    size = sum(len(value) for _, value in strings)
    flagged: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    start = time.perf_counter()
    flagged_strings = 0
    for name, value in strings:
        walker = Walker(ALL_RULES)
        walker.string(value, name)
        flagged_strings += bool(walker.hits)
        for hit in walker.hits:
            flagged[hit.kind] += 1
            examples.setdefault(hit.kind, []).append(hit.excerpt)
    elapsed = time.perf_counter() - start
    print(
        f"3c. {len(strings)} strings ({size / 1e6:.1f} MB) of replies and prose from {len(files)} files: "
        f"{flagged_strings} flagged, {dict(flagged)}"
    )
    for kind, excerpts in examples.items():
        print(f"    {kind}: {', '.join(excerpts[:8])}")
    print(f"4. speed: {size / 1e6 / elapsed:.2f} MB/s through Walker.string ({elapsed:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000, help="random tokens per alphabet and length")
    parser.add_argument("--realdata", type=Path, help="a folder of JSON/JSONL text (e.g. /work/shared/realdata)")
    args = parser.parse_args()
    random_token_misses(args.samples)
    vendor_keys_in_prose(max(args.samples // 20, 50))
    real_cassettes()
    real_text([DATA / "judge_outputs", *([args.realdata] if args.realdata else [])])


if __name__ == "__main__":
    main()
