"""The Datadog timeseries side of the backtest: the request obs sends and the answer the fake gives, both read
by datadog-api-client's own models (the published shapes), and how points, gaps and a widened interval are read."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.model_utils import ModelNormal, model_to_dict
from datadog_api_client.v2.model.timeseries_formula_query_request import TimeseriesFormulaQueryRequest
from datadog_api_client.v2.model.timeseries_formula_query_response import TimeseriesFormulaQueryResponse

from sync.core.backtest.timeseries import Query, Unreadable, overlapping, points, query_for, request
from sync.core.metric_query import Leaf

from ..fakedd.common import Rejected
from ..fakedd.timeseries import Timeseries

DAY = datetime(2025, 3, 4, tzinfo=UTC)
AGE = Query("max", "aws.sqs.approximate_age_of_oldest_message", (("queuename", "a"), ("region", "us-east-1")))
DELETED = Query("sum", "aws.sqs.number_of_messages_deleted", (("queuename", "a"),), count=True)


def _parsed(body: Any, model: type) -> ModelNormal:
    parsed: ModelNormal = ApiClient(Configuration()).deserialize(  # type: ignore[no-untyped-call]
        json.dumps(body), (model,), True
    )
    assert not parsed._unparsed
    return parsed


def _as_sent(model: ModelNormal) -> dict[str, Any]:
    """The model back in the API's field names: what it understood of the JSON."""
    found: dict[str, Any] = model_to_dict(model)  # type: ignore[no-untyped-call]
    return found


def test_a_leaf_is_asked_as_written() -> None:
    leaf = Leaf("sum", "aws.sqs.number_of_messages_deleted", (("queuename", "a"),), "as_count")
    assert query_for(leaf) == DELETED
    assert DELETED.text == "sum:aws.sqs.number_of_messages_deleted{queuename:a}.as_count()"
    assert AGE.text == "max:aws.sqs.approximate_age_of_oldest_message{queuename:a,region:us-east-1}"
    assert Query("avg", "custom.jobs", ()).text == "avg:custom.jobs{*}"


def test_the_request_is_the_published_shape_and_asks_one_minute() -> None:
    body = request([AGE, DELETED], DAY, DAY + timedelta(days=1))
    assert _as_sent(_parsed(body, TimeseriesFormulaQueryRequest)) == body  # every field known to the model
    attributes = body["data"]["attributes"]
    assert (attributes["from"], attributes["to"], attributes["interval"]) == (1741046400000, 1741132800000, 60000)
    assert [q["query"] for q in attributes["queries"]] == [AGE.text, DELETED.text]


def test_the_fake_answers_the_published_shape_and_obs_reads_it() -> None:
    fake = Timeseries()
    start = int(DAY.timestamp())
    fake.put(AGE.metric, {"queuename": "a", "region": "us-east-1"}, {start: 5.0, start + 60: 7.0, start + 180: 9.0})
    fake.put(DELETED.metric, {"queuename": "a"}, {start + 30: 2.0, start + 45: 3.0})
    missing = Query("avg", "aws.sqs.number_of_messages_deleted", (("queuename", "b"),))
    end = DAY + timedelta(hours=1)
    answer = fake.query(request([AGE, missing, DELETED], DAY, end))
    assert _as_sent(_parsed(answer, TimeseriesFormulaQueryResponse)) == answer
    assert [s["query_index"] for s in answer["data"]["attributes"]["series"]] == [0, 2]  # nothing for the second
    found = points(answer, 3, DAY, end)
    minute = timedelta(minutes=1)
    assert found[0] == {DAY: 5.0, DAY + minute: 7.0, DAY + 3 * minute: 9.0}  # the null minute is no point
    assert found[1] == {}
    assert found[2] == {DAY: 5.0}  # .as_count(): the minute's points summed


def test_more_than_1500_minutes_come_back_coarser_and_are_refused() -> None:
    fake = Timeseries()
    fake.put(AGE.metric, dict(AGE.tags), {int(DAY.timestamp()) + 60 * m: 1.0 for m in range(3000)})
    end = DAY + timedelta(days=2)
    answer = fake.query(request([AGE], DAY, end))
    times = answer["data"]["attributes"]["times"]
    assert times[1] - times[0] == 120_000
    with pytest.raises(Unreadable, match="120-second intervals"):
        points(answer, 1, DAY, end)


def test_a_range_that_ends_before_it_starts_is_refused() -> None:
    with pytest.raises(Rejected) as refused:
        Timeseries().query(request([AGE], DAY, DAY))
    assert refused.value.status == 400


def test_queries_the_model_could_not_keep_apart_are_not_read() -> None:
    wide = Query("sum", AGE.metric, (("region", "us-east-1"),))
    other_space = Query("avg", AGE.metric, AGE.tags)
    found = overlapping([AGE, wide, other_space, DELETED])
    assert set(found) == {AGE, wide, other_space}
    assert found[wide].startswith(f"{wide.text} would also select the series obs reads for ")
