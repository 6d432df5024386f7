"""The bootstrap's defaults, importable without numpy (the CLI's option defaults name them)."""

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
CONFIDENCE = 0.95
