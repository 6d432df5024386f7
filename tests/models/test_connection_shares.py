"""Connection shares for worker processes: every model uses its worker's share, and the shares add up to its limit."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Iterator
from multiprocessing.connection import Connection

import pytest

from jurybox.models import ProviderModel, get_model, shared_model, split_evenly, use_connection_share
from jurybox.stubs import StubServer

SERVER = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def whole_process() -> Iterator[None]:
    # The share is a setting of the process: give the next test the whole limit back.
    yield
    use_connection_share(0, 1)


def limits_in_a_new_loop(model: ProviderModel) -> tuple[int, int]:
    """The limiter's maximum and the pooled connections a model sets up for a fresh event loop."""

    async def setup() -> tuple[int, int]:
        state = model._state()
        limits = state.limiter.maximum, sum(lane.size for lane in state.lanes)
        await model.aclose()
        return limits

    return asyncio.run(setup())


def test_split_evenly_adds_up_exactly() -> None:
    assert split_evenly(16, 3) == [6, 5, 5]
    assert split_evenly(2, 4) == [1, 1, 0, 0]
    assert all(sum(split_evenly(total, parts)) == total for total in range(50) for parts in range(1, 9))


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_the_shares_of_every_model_add_up_to_its_limit(count: int) -> None:
    cached = shared_model(f"openai:cached@{SERVER}", min_concurrency=40)  # in the process cache
    own = get_model(f"openai:own@{SERVER}", concurrency=7)  # built by the caller, never cached
    shares: dict[str, list[int]] = {"cached": [], "own": [], "later": []}
    for index in range(count):
        use_connection_share(index, count)
        later = get_model(f"openai:later@{SERVER}", concurrency=16)  # built after the share was set
        for name, model in (("cached", cached), ("own", own), ("later", later)):
            shares[name].append(model.process_concurrency)
            assert limits_in_a_new_loop(model) == (model.process_concurrency, model.process_concurrency)

    assert (sum(shares["cached"]), sum(shares["own"]), sum(shares["later"])) == (40, 7, 16)
    assert cached.concurrency == 40 and own.concurrency == 7  # the configured limit is left as it was


def test_a_limit_below_the_worker_count_still_gives_each_worker_a_connection() -> None:
    model = get_model(f"openai:narrow@{SERVER}", concurrency=2)
    for index in range(4):
        use_connection_share(index, 4)
        assert model.process_concurrency == 1


def test_a_share_must_name_a_worker() -> None:
    for index, count in ((0, 0), (2, 2), (-1, 2)):
        with pytest.raises(ValueError, match="connection share"):
            use_connection_share(index, count)


async def test_a_models_calls_and_connections_stay_within_the_share() -> None:
    with StubServer("openai", reply="ok", latency=0.1) as stub:
        model = get_model("openai:m", base_url=stub.base_url, concurrency=8, cache=False)
        use_connection_share(1, 2)
        await asyncio.gather(*(model.generate([{"role": "user", "content": f"{i}"}]) for i in range(20)))
    assert len(stub.requests) == 20
    assert stub.max_in_flight == 4 and stub.connections <= 4


def _report_shares(connection: Connection, models: list[ProviderModel], index: int, count: int) -> None:
    use_connection_share(index, count)
    later = get_model(f"openai:after-fork@{SERVER}", concurrency=16)
    connection.send([model.process_concurrency for model in (*models, later)])
    connection.close()


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs os.fork")
def test_forked_workers_split_every_model_and_the_parent_keeps_its_limit() -> None:
    models = [shared_model(f"openai:before-fork@{SERVER}", min_concurrency=33), get_model("openai:x", base_url=SERVER)]
    context = multiprocessing.get_context("fork")
    received = []
    for index in range(2):
        reader, writer = context.Pipe(duplex=False)
        process = context.Process(target=_report_shares, args=(writer, models, index, 2))
        process.start()
        writer.close()
        received.append(reader.recv())
        process.join(timeout=30)
        assert process.exitcode == 0

    assert received == [[17, 8, 8], [16, 8, 8]]
    assert [model.process_concurrency for model in models] == [33, 16]
