"""obs trace in GovCloud and China against moto: the command an alert prints resolves the topic there."""

from __future__ import annotations

import io
import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from sync.aws.core.preflight import enable_instructions
from sync.aws.core.target import target_from_arn
from sync.cli.conventions import Exit
from sync.cli.trace import execute
from sync.errors import ObsError
from tests.trace.test_trace_moto import NOW, ago, parse
from tests.trace.trace_world import ACCOUNT, World, failure_event, failure_group

TOPIC = "prod-jobs-critical"  # the example's jobs-critical topic, named as in prod
QUEUE = "prod-critical"
PLACES = [("gov", "us-gov-west-1", "aws-us-gov"), ("china", "cn-north-1", "aws-cn")]


@pytest.fixture
def definitions(example_copy: Path) -> Path:
    """The example plus prod's layout in moto's account, in GovCloud (`gov`) and in China (`china`)."""
    prod = yaml.safe_load((example_copy / "environments" / "prod.yaml").read_text())
    for name, region, _ in PLACES:
        env = {**prod, "name": name, "aws": {"account_id": ACCOUNT, "region": region}}
        (example_copy / "environments" / f"{name}.yaml").write_text(yaml.safe_dump(env, sort_keys=True))
    return example_copy


def failing_topic(there: World) -> tuple[str, str, list[str]]:
    """The topic with delivery-status logging on, its queue, and two failed deliveries in its Failure log."""
    topic = there.topic(TOPIC)
    there.enable_logging(topic)
    queue_arn = there.queue(QUEUE)
    there.subscribe(topic, queue_arn)
    ids = [str(uuid.uuid4()) for _ in range(2)]
    events = [
        (
            ago(20 - n) + timedelta(seconds=10),
            failure_event(
                "access_denied",
                message_id=ident,
                topic_arn=topic,
                queue=QUEUE,
                published=ago(20 - n),
                destination=queue_arn,
            ),
        )
        for n, ident in enumerate(ids)
    ]
    there.put_events(failure_group(topic), events)
    return topic, queue_arn, ids


def trace(there: World, *argv: str, definitions: Path | None = None) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    args = parse(*argv, "--format", "json")
    args.definitions = definitions
    code = execute(args, there.clients, now=NOW, out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())


@pytest.mark.parametrize(("env", "region", "partition"), PLACES)
def test_the_alerts_trace_command_resolves_the_topic_in_its_partition(
    world: World, definitions: Path, env: str, region: str, partition: str
) -> None:
    there = World(world.endpoint, region)
    topic, queue_arn, ids = failing_topic(there)
    assert topic == f"arn:{partition}:sns:{region}:{ACCOUNT}:{TOPIC}"  # what AWS (and moto) call it

    # the command every delivery-failure alert of the environment prints
    code, doc = trace(there, "--env", env, "--topic", TOPIC, "--since", "2h", "--peek-dlq", definitions=definitions)

    assert code == Exit.FOUND
    assert doc["topic"] == topic
    assert sorted(f["message_id"] for f in doc["failures"]) == sorted(ids)
    assert {f["queue"] for f in doc["failures"]} == {QUEUE}
    assert {c["cause"] for c in doc["causes"]} == {"queue-policy"}
    fix = json.dumps(doc["causes"])
    assert f"arn:{partition}:sqs:{region}:{ACCOUNT}:{QUEUE}" in fix and "arn:aws:" not in fix
    assert queue_arn == f"arn:{partition}:sqs:{region}:{ACCOUNT}:{QUEUE}"


@pytest.mark.parametrize(("env", "region", "partition"), PLACES)
def test_a_topic_arn_of_another_partition_is_traced_without_definitions(
    world: World, env: str, region: str, partition: str
) -> None:
    there = World(world.endpoint, region)
    topic, _, ids = failing_topic(there)

    code, doc = trace(there, "--topic", f"arn:{partition}:sns:{region}:{ACCOUNT}:{TOPIC}", "--since", "1h")

    assert (code, doc["topic"]) == (Exit.FOUND, topic)
    assert sorted(f["message_id"] for f in doc["failures"]) == sorted(ids)


@pytest.mark.parametrize(("env", "region", "partition"), PLACES)
def test_a_region_written_in_the_wrong_partition_says_which_arn_to_write(
    world: World, env: str, region: str, partition: str
) -> None:
    there = World(world.endpoint, region)
    with pytest.raises(ObsError) as caught:
        trace(there, "--topic", f"arn:aws:sns:{region}:{ACCOUNT}:{TOPIC}")
    assert str(caught.value) == (
        f"topic arn:aws:sns:{region}:{ACCOUNT}:{TOPIC} says partition aws, but region '{region}' is in partition "
        f"{partition}: write the ARN as arn:{partition}:sns:{region}:<account>:<topic>"
    )


def test_the_logging_instructions_name_a_role_of_the_topics_partition() -> None:
    text = enable_instructions(target_from_arn(f"arn:aws-us-gov:sns:us-gov-east-1:{ACCOUNT}:{TOPIC}"))
    assert f"--attribute-value arn:aws-us-gov:iam::{ACCOUNT}:role/sns-delivery-status-logging " in text
