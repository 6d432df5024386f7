"""Judge models: one request (``GenerateRequest``) in, one reply out; providers, FakeModel, cache, retries and spend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurybox.core import KIND_PROVIDER, PluginRegistry
from jurybox.models._base import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT, ProviderModel
from jurybox.models._cache import (
    CACHE_MODE_ENV,
    CACHE_URL_ENV,
    CacheBackend,
    CacheStats,
    ResponseCache,
    cache_key,
    cache_key_material,
    canonical_json,
    default_cache_location,
    default_cache_path,
    is_cache_url,
    open_cache,
)
from jurybox.models._cache_only import CacheOnlyModel, cache_only_line
from jurybox.models._endpoint_calls import EndpointCalls, count_endpoint_calls, merge_endpoint_calls
from jurybox.models._errors import (
    EmptyResponseError,
    ModelConfigError,
    ModelConnectionError,
    ModelNotConfigured,
    ModelTimeoutError,
    ProviderError,
    QuotaExceededError,
    RateLimitError,
    RequestRejectedError,
    ServerError,
)
from jurybox.models._fake import FakeModel
from jurybox.models._fleet import FleetModel
from jurybox.models._fleet_routes import FleetUnavailableError
from jurybox.models._function import FunctionModel
from jurybox.models._limiter import AdaptiveLimiter
from jurybox.models._meter import MeteredModel, start_case_spend
from jurybox.models._prices import DEFAULT_PRICES, Price, cost_of, get_price, load_prices, set_price
from jurybox.models._probe import (
    PROBE_TIMEOUT,
    ProbeTarget,
    openai_compatible_target,
    probe,
    probe_all,
    ready_to_probe,
)
from jurybox.models._providers import (
    BUILT_IN,
    ProviderInfo,
    provider_class,
    provider_info,
    provider_names,
    register_provider,
)
from jurybox.models._rate_signal import (
    RATE_URL_ENV,
    MemoryRateSignal,
    RateLedger,
    RateSignal,
    RateState,
    rate_key,
    use_rate_signal,
)
from jurybox.models._rate_signal_redis import RedisRateSignal
from jurybox.models._registry import (
    JUDGE_MODEL_ENV,
    env_model_spec,
    get_model,
    parse_spec,
    resolve_model,
    set_default_model,
    shared_model,
)
from jurybox.models._retry import RetryPolicy, parse_retry_after
from jurybox.models._shares import split_evenly, use_connection_share
from jurybox.models._spec import ModelSpec
from jurybox.models._spend import Spend, UsageTracker, record_failure, record_usage
from jurybox.models._types import (
    ChatMessage,
    GenerateRequest,
    JudgeModel,
    JudgeModelBase,
    ModelError,
    ModelResponse,
    ToolSpec,
    Usage,
    as_judge_model,
)

if TYPE_CHECKING:
    from jurybox.models._anthropic import AnthropicModel
    from jurybox.models._ollama import OllamaModel
    from jurybox.models._openai import OpenAIModel


def __getattr__(name: str) -> Any:
    # The provider classes import their SDKs, which is slow: ``from jurybox.models import OpenAIModel``
    # loads the built-in provider whose registered class has that name, only when asked for.
    for provider in BUILT_IN:
        plugin = PluginRegistry.default().get(KIND_PROVIDER, provider)
        if plugin is not None and isinstance(plugin.target, str) and plugin.target.endswith(f":{name}"):
            return provider_class(provider)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # The provider classes are loaded on first use, so dir() lists them from __all__, not globals().
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "CACHE_MODE_ENV",
    "CACHE_URL_ENV",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_PRICES",
    "DEFAULT_TIMEOUT",
    "JUDGE_MODEL_ENV",
    "PROBE_TIMEOUT",
    "RATE_URL_ENV",
    "AdaptiveLimiter",
    "AnthropicModel",
    "CacheBackend",
    "CacheOnlyModel",
    "CacheStats",
    "ChatMessage",
    "EmptyResponseError",
    "EndpointCalls",
    "FakeModel",
    "FleetModel",
    "FleetUnavailableError",
    "FunctionModel",
    "GenerateRequest",
    "JudgeModel",
    "JudgeModelBase",
    "MemoryRateSignal",
    "MeteredModel",
    "ModelConfigError",
    "ModelConnectionError",
    "ModelError",
    "ModelNotConfigured",
    "ModelResponse",
    "ModelSpec",
    "ModelTimeoutError",
    "OllamaModel",
    "OpenAIModel",
    "Price",
    "ProbeTarget",
    "ProviderError",
    "ProviderInfo",
    "ProviderModel",
    "QuotaExceededError",
    "RateLedger",
    "RateLimitError",
    "RateSignal",
    "RateState",
    "RedisRateSignal",
    "RequestRejectedError",
    "ResponseCache",
    "RetryPolicy",
    "ServerError",
    "Spend",
    "ToolSpec",
    "Usage",
    "UsageTracker",
    "as_judge_model",
    "cache_key",
    "cache_key_material",
    "cache_only_line",
    "canonical_json",
    "cost_of",
    "count_endpoint_calls",
    "default_cache_location",
    "default_cache_path",
    "env_model_spec",
    "get_model",
    "get_price",
    "is_cache_url",
    "load_prices",
    "merge_endpoint_calls",
    "open_cache",
    "openai_compatible_target",
    "parse_retry_after",
    "parse_spec",
    "probe",
    "probe_all",
    "provider_class",
    "provider_info",
    "provider_names",
    "rate_key",
    "ready_to_probe",
    "record_failure",
    "record_usage",
    "register_provider",
    "resolve_model",
    "set_default_model",
    "set_price",
    "shared_model",
    "split_evenly",
    "start_case_spend",
    "use_connection_share",
    "use_rate_signal",
]
