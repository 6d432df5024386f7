"""The web dashboard (``jurybox serve``): runs, cases with every judgment, compare, trends and lessons.

Needs the ``web`` extra (``pip install 'jurybox[web]'``). Pages are rendered on
the server with Jinja2 (autoescaped), each has a JSON twin under ``/api``, and
every asset ships in the package: no CDN, no build step.

    from jurybox.web import create_app
    app = create_app("sqlite:///.jurybox/jurybox.db")   # any ASGI server: uvicorn, hypercorn...
"""

from jurybox.web._access import StoreAccess, StoreUnavailableError
from jurybox.web._app import create_app
from jurybox.web._common import WebSettings
from jurybox.web._otlp_settings import MAX_OTLP_BODY_BYTES, MAX_QUEUED, OtlpCounters, OtlpSettings
from jurybox.web._otlp_suite import SuiteJudges, SuiteJudgesError, load_suite_judges
from jurybox.web._otlp_worker import OtlpWorker
from jurybox.web._security import CONTENT_SECURITY_POLICY

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "MAX_OTLP_BODY_BYTES",
    "MAX_QUEUED",
    "OtlpCounters",
    "OtlpSettings",
    "OtlpWorker",
    "StoreAccess",
    "StoreUnavailableError",
    "SuiteJudges",
    "SuiteJudgesError",
    "WebSettings",
    "create_app",
    "load_suite_judges",
]
