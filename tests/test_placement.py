"""AWS placement: partitions, ARNs, endpoints, consoles and the SNS principal, per region and per environment."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.loaders
import botocore.session
import pytest
import yaml

from sync.errors import ObsError
from sync.expand import placement

from .conftest import Obs


@pytest.mark.parametrize(
    ("region", "partition"),
    [
        ("us-east-1", "aws"),
        ("eu-west-1", "aws"),
        ("ap-east-1", "aws"),
        ("us-gov-west-1", "aws-us-gov"),
        ("us-gov-east-1", "aws-us-gov"),
        ("cn-north-1", "aws-cn"),
        ("cn-northwest-1", "aws-cn"),
        ("us-iso-east-1", "aws-iso"),
        ("us-isob-east-1", "aws-iso-b"),
    ],
)
def test_each_region_is_in_its_partition(region: str, partition: str) -> None:
    assert placement.partition(region) == partition


def test_arns_carry_the_partition_of_their_region() -> None:
    assert placement.arn("sns", "us-east-1", "111111111111", "jobs") == "arn:aws:sns:us-east-1:111111111111:jobs"
    assert (
        placement.arn("sns", "us-gov-west-1", "111111111111", "jobs")
        == "arn:aws-us-gov:sns:us-gov-west-1:111111111111:jobs"
    )
    china = placement.arn("sqs", "cn-north-1", "111111111111", "q.fifo")
    assert china == "arn:aws-cn:sqs:cn-north-1:111111111111:q.fifo"


def test_a_global_service_arn_has_no_region_but_keeps_the_partition() -> None:
    role = placement.arn("iam", "cn-northwest-1", "111111111111", "role/logs", regional=False)
    assert role == "arn:aws-cn:iam::111111111111:role/logs"


@pytest.mark.parametrize(
    ("region", "console", "sqs"),
    [
        ("us-west-2", "https://us-west-2.console.aws.amazon.com", "https://sqs.us-west-2.amazonaws.com"),
        ("us-gov-west-1", "https://console.amazonaws-us-gov.com", "https://sqs.us-gov-west-1.amazonaws.com"),
        ("us-gov-east-1", "https://console.amazonaws-us-gov.com", "https://sqs.us-gov-east-1.amazonaws.com"),
        ("cn-north-1", "https://console.amazonaws.cn", "https://sqs.cn-north-1.amazonaws.com.cn"),
        ("cn-northwest-1", "https://console.amazonaws.cn", "https://sqs.cn-northwest-1.amazonaws.com.cn"),
    ],
)
def test_console_host_and_endpoint_per_region(region: str, console: str, sqs: str) -> None:
    assert placement.console(region) == console
    assert placement.endpoint("sqs", region) == sqs


def test_a_partition_without_a_public_console_is_refused_in_one_line() -> None:
    with pytest.raises(ObsError, match=r"no AWS console for region 'us-iso-east-1' \(partition aws-iso\)"):
        placement.console("us-iso-east-1")


@pytest.mark.parametrize(
    ("region", "principal"),
    [
        ("us-east-1", "sns.amazonaws.com"),
        ("ap-east-1", "sns.ap-east-1.amazonaws.com"),
        ("me-south-1", "sns.me-south-1.amazonaws.com"),
        ("ap-northeast-3", "sns.ap-northeast-3.amazonaws.com"),  # opt-in for SNS, though enabled by default
        ("us-gov-west-1", "sns.amazonaws.com"),
        ("cn-north-1", "sns.amazonaws.com"),
    ],
)
def test_the_sns_principal_is_regional_only_in_opt_in_regions(region: str, principal: str) -> None:
    assert placement.sns_principal(f"arn:aws:sns:{region}:111111111111:jobs") == principal


def test_the_partition_table_agrees_with_botocore() -> None:
    """A new partition or region in botocore that obs would place wrongly fails here, not in an alert."""
    data = botocore.loaders.create_loader().load_data("partitions")
    theirs = {p["id"]: p for p in data["partitions"]}
    ours = {p.name: p for p in placement.PARTITIONS}
    assert set(ours) <= set(theirs)
    for name, ours_one in ours.items():
        assert ours_one.regions.pattern == theirs[name]["regionRegex"], name
        assert ours_one.dns_suffix == theirs[name]["outputs"]["dnsSuffix"], name
    session = botocore.session.get_session()
    for name in session.get_available_partitions():
        assert re.fullmatch(placement.ARN_PARTITION, name), name
        for region in session.get_available_regions("sns", partition_name=name):
            assert placement.partition(region) == (name if name in ours else "aws"), region


# --- whole environments in GovCloud and China ------------------------------------------------------------


@pytest.fixture
def far(example_copy: Path, obs: Obs) -> Obs:
    """The example plus prod's layout in GovCloud (`gov`) and in China (`china`)."""
    prod = yaml.safe_load((example_copy / "environments" / "prod.yaml").read_text())
    for name, region in (("gov", "us-gov-west-1"), ("china", "cn-north-1")):
        env = {**prod, "name": name, "aws": {**prod["aws"], "region": region}}
        (example_copy / "environments" / f"{name}.yaml").write_text(yaml.safe_dump(env, sort_keys=True))
    return obs


def _bodies(far: Obs, env: str, out: Path) -> str:
    """Every string in every rendered request body, one per line."""
    assert far("render", "--env", env, "--out", str(out)) == 0, far.err
    return "\n".join(text for path in sorted(out.rglob("*.json")) for text in _strings(json.loads(path.read_text())))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@pytest.mark.parametrize(
    ("env", "partition", "region", "console", "sqs_host"),
    [
        (
            "gov",
            "aws-us-gov",
            "us-gov-west-1",
            "https://console.amazonaws-us-gov.com",
            "sqs.us-gov-west-1.amazonaws.com",
        ),
        ("china", "aws-cn", "cn-north-1", "https://console.amazonaws.cn", "sqs.cn-north-1.amazonaws.com.cn"),
    ],
)
def test_an_environment_outside_aws_renders_its_own_arns_and_consoles(
    far: Obs, tmp_path: Path, env: str, partition: str, region: str, console: str, sqs_host: str
) -> None:
    assert far("validate") == 0, far.err
    text = _bodies(far, env, tmp_path / env)
    arns = set(re.findall(r"arn:[a-z-]+:[a-z]+:[^\s\"`)]*", text))
    assert f"arn:{partition}:sns:{region}:111111111111:prod-jobs-critical" in arns
    assert {a.split(":")[1] for a in arns} == {partition}, sorted(arns)
    hosts = set(re.findall(r"https://([a-z0-9.-]*(?:aws\.amazon|amazonaws)[a-z0-9.-]*)", text))
    assert hosts == {console.removeprefix("https://")}
    assert f"https%3A%2F%2F{sqs_host}%2F111111111111%2Fprod-critical" in text
    topic = f"{console}/sns/v3/home?region={region}#/topic/arn:{partition}:sns:{region}:111111111111:prod-jobs-critical"
    assert topic in text
    assert f"`obs trace --env {env} --topic prod-jobs-critical --since 2h --peek-dlq`" in text


def test_obs_links_of_a_china_environment_open_the_china_console(far: Obs) -> None:
    assert far("links", "--env", "china", "--queue", "critical", "--offline", "--format", "json") == 0, far.err
    urls = [link["url"] for queue in json.loads(far.out)["queues"] for link in queue["links"]]
    consoles = [url for url in urls if "console" in url]
    assert consoles and all(url.startswith("https://console.amazonaws.cn/") for url in consoles)
    assert any("arn:aws-cn:sns:cn-north-1:111111111111:prod-jobs-critical" in url for url in consoles)
