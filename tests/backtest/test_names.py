"""The Datadog-to-CloudWatch table covers every metric the catalogue's monitors read, and says why a query
cannot be read from CloudWatch rather than reading the wrong series."""

from __future__ import annotations

from sync.aws.core.datadog_names import TABLE, Read, read_for
from sync.core.backtest.reads import reads
from sync.core.kinds import SLO
from sync.definitions.model import Definitions
from sync.expand.desired import expand_env


def test_every_metric_the_monitors_read_has_a_cloudwatch_source(example: Definitions) -> None:
    seen = set()
    for env in example.environments:
        resources = expand_env(example, env)
        slos = {r.key: r.body for r in resources if r.kind == SLO}
        for resource in (r for r in resources if r.kind.notifies):
            found = reads(resource.body, slos)
            assert not found.problem, (resource.key, found.problem)
            for metric, tags in found.filters:
                read = read_for(metric, tags, env.region, env.account_id, env.account_tag)
                assert isinstance(read, Read), (resource.key, read)
                assert read.region == env.region
                seen.add(metric)
    assert seen == set(TABLE)  # and the table holds nothing the monitors do not read


def test_a_query_is_read_with_the_dimensions_its_tags_fix() -> None:
    read = read_for(
        "aws.ecs.service.cpuutilization.maximum",
        (("aws_account", "222222222222"), ("clustername", "c"), ("region", "eu-west-1"), ("servicename", "s")),
        "us-east-1",
        "111111111111",
        "aws_account",
    )
    assert isinstance(read, Read)
    assert (read.source.namespace, read.source.metric, read.source.statistic) == (
        "AWS/ECS",
        "CPUUtilization",
        "Maximum",
    )
    assert read.dimensions == (("ClusterName", "c"), ("ServiceName", "s"))
    assert (read.region, read.account) == ("eu-west-1", "222222222222")


def test_queries_cloudwatch_cannot_answer_say_why() -> None:
    assert "no CloudWatch source" in str(read_for("aws.sqs.unknown", (("queuename", "q"),), "r", "a"))
    assert "not a CloudWatch dimension" in str(
        read_for("aws.sqs.number_of_messages_deleted", (("queuename", "q"), ("team", "x")), "r", "a")
    )
    assert "no servicename filter" in str(read_for("aws.ecs.service.running", (("clustername", "c"),), "r", "a"))
