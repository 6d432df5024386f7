"""Known vendor key formats, from detect-secrets' regular-expression plugins (Yelp/detect-secrets).

jurybox keeps no list of vendors of its own beyond the LLM providers it talks
to (``_patterns.py``): every format detect-secrets ships (AWS, Azure storage,
Twilio, SendGrid, npm, PyPI, Slack, Stripe, Square, Discord, Telegram, GitLab,
GitHub, Mailchimp, Artifactory, IBM, SoftLayer, Cloudant, JWTs...) is read from
its plugin classes, so a new release's plugins are picked up on upgrade. Plugins
that are not about one vendor's format are left out: the public IP address
detector (an address is not a secret) and the keyword and entropy plugins, whose
jobs ``_names.py`` and ``_randomness.py`` do for structured traffic.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from jurybox.core import require

# detect-secrets' plugins that are not one vendor's key format.
_NOT_VENDOR_FORMATS = frozenset({"IPPublicDetector", "KeywordDetector"})


@dataclass(frozen=True)
class VendorFormat:
    """One detect-secrets plugin: the kind name lint reports and the plugin that finds it."""

    kind: str
    plugin: Any

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where the plugin's secrets sit in ``text``.

        The plugin's own ``analyze_string`` returns a regex group, which for some plugins is only
        the prefix (``glpat`` of a GitLab token): the span is the longest group of 8 characters or
        more, else the whole match, and the plugin must still accept the match (its JWT check).
        """
        for regex in self.plugin.denylist:
            for match in regex.finditer(text):
                if not any(True for _ in self.plugin.analyze_string(match.group())):
                    continue
                groups = [match.span(i) for i in range(1, regex.groups + 1) if match.group(i)]
                longest = max(groups, key=lambda span: span[1] - span[0], default=(0, 0))
                yield longest if longest[1] - longest[0] >= 8 else match.span()


def kind_name(secret_type: str) -> str:
    """``"Twilio API Key"`` -> ``"twilio-api-key"``: the name lint reports and ``--ignore`` takes."""
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


# A run of key characters with a digit or a lower-to-upper case change in it: every vendor key holds
# one of 10+ characters (a random string of that length almost surely has one); prose and most
# strings of a stream do not, and skip the 40 expressions.
_KEY_LIKE_RUN = re.compile(r"[A-Za-z0-9_\-+/=.:]*(?:\d|[a-z][A-Z])[A-Za-z0-9_\-+/=.:]*")


def may_hold_vendor_key(text: str) -> bool:
    """False when no vendor format can match ``text`` (no key-like run of 10 characters or more)."""
    return any(len(run.group()) >= 10 for run in _KEY_LIKE_RUN.finditer(text))


@cache
def vendor_formats() -> tuple[VendorFormat, ...]:
    """Every regular-expression plugin detect-secrets has, instantiated once."""
    require("detect_secrets", extra="cassettes", feature="finding vendor keys to redact", package="detect-secrets")
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    formats = []
    plugins: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
    for secret_type, plugin_class in sorted(plugins.items()):
        if not issubclass(plugin_class, RegexBasedDetector) or plugin_class.__name__ in _NOT_VENDOR_FORMATS:
            continue
        formats.append(VendorFormat(kind_name(secret_type), plugin_class()))
    return tuple(formats)
