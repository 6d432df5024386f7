"""An experiment read from the store: its runs by id (or ``last``), then the view."""

from __future__ import annotations

from jurybox.experiments._view import ExperimentView, build_view
from jurybox.store import Store, StoreError


def experiment_view(store: Store, ref: str, *, resamples: int = 2000) -> ExperimentView:
    """The view of the experiment ``ref`` names: its id, a unique prefix, or ``last``.

    Raises:
        StoreError: no experiment matches (or a prefix matches several).
    """
    experiment = store.runs.resolve_experiment(ref)
    runs = store.runs.of_experiment(experiment)
    if not runs:
        raise StoreError(f"experiment {experiment} has no runs")
    return build_view(experiment, runs, store.results.records, resamples=resamples)
