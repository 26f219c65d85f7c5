"""Pure: where a region sits in AWS, for expansion, links and trace alike.

Its partition (what ARNs start with), the DNS suffix of its endpoints, the console host that serves it and the
service principal SNS signs with there. Nothing else builds `arn:` strings, endpoints or console hosts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sync.errors import ObsError


@dataclass(frozen=True)
class Partition:
    name: str
    regions: re.Pattern[str]  # the partition's regionRegex in botocore's data/partitions.json
    dns_suffix: str
    console: str | None  # the console's base URL, {region} where regions have hosts of their own; None: unknown


# GovCloud and China are separate clouds: other accounts, other ARNs, other consoles.
AWS = Partition(
    "aws",
    re.compile(r"^(us|eu|ap|sa|ca|me|af|il|mx)\-\w+\-\d+$"),
    "amazonaws.com",
    "https://{region}.console.aws.amazon.com",
)
GOVCLOUD = Partition(
    "aws-us-gov", re.compile(r"^us\-gov\-\w+\-\d+$"), "amazonaws.com", "https://console.amazonaws-us-gov.com"
)
CHINA = Partition("aws-cn", re.compile(r"^cn\-\w+\-\d+$"), "amazonaws.com.cn", "https://console.amazonaws.cn")
# Isolated and sovereign partitions: their ARNs and endpoints are public, their consoles are not.
ISOLATED = tuple(
    Partition(name, re.compile(regions), suffix, None)
    for name, regions, suffix in (
        ("aws-iso", r"^us\-iso\-\w+\-\d+$", "c2s.ic.gov"),
        ("aws-iso-b", r"^us\-isob\-\w+\-\d+$", "sc2s.sgov.gov"),
        ("aws-iso-e", r"^eu\-isoe\-\w+\-\d+$", "cloud.adc-e.uk"),
        ("aws-iso-f", r"^us\-isof\-\w+\-\d+$", "csp.hci.ic.gov"),
        ("aws-eusc", r"^eusc\-(de)\-\w+\-\d+$", "amazonaws.eu"),
    )
)
PARTITIONS = (AWS, GOVCLOUD, CHINA, *ISOLATED)

# The partition field of an ARN, for patterns that read ARNs of any partition (aws, aws-cn, aws-iso-b, ...).
ARN_PARTITION = r"aws(?:-[a-z]+)*"

SNS_PRINCIPAL = "sns.amazonaws.com"
# SNS's opt-in regions, where it signs with a regional principal (SNS Developer Guide, "Sending Amazon SNS messages
# to an Amazon SQS queue or AWS Lambda function in a different Region"). Its list names ap-northeast-3 (Osaka),
# which the account-level list of regions disabled by default does not.
OPT_IN_REGIONS = frozenset(
    {
        "af-south-1",
        "ap-east-1",
        "ap-east-2",
        "ap-northeast-3",
        "ap-south-2",
        "ap-southeast-3",
        "ap-southeast-4",
        "ap-southeast-5",
        "ap-southeast-6",
        "ap-southeast-7",
        "ca-west-1",
        "eu-central-2",
        "eu-south-1",
        "eu-south-2",
        "il-central-1",
        "me-central-1",
        "me-south-1",
        "mx-central-1",
    }
)


def partition_of(region: str) -> Partition:
    """The partition whose regions the name matches; `aws` for any other, as botocore resolves it."""
    return next((p for p in PARTITIONS if p.regions.match(region)), AWS)


def partition(region: str) -> str:
    return partition_of(region).name


def arn(service: str, region: str, account: str, resource: str, *, regional: bool = True) -> str:
    """The ARN of a resource in a region's partition; a global service (IAM) leaves the region field empty."""
    return f"arn:{partition(region)}:{service}:{region if regional else ''}:{account}:{resource}"


def dns_suffix(region: str) -> str:
    return partition_of(region).dns_suffix


def endpoint(service: str, region: str) -> str:
    """A service's regional endpoint, e.g. https://sqs.cn-north-1.amazonaws.com.cn."""
    return f"https://{service}.{region}.{dns_suffix(region)}"


def console(region: str) -> str:
    """The AWS console that serves a region: GovCloud and China have consoles of their own."""
    where = partition_of(region)
    if where.console is None:
        raise ObsError.of(
            f"obs knows no AWS console for region {region!r} (partition {where.name})",
            "use a region of the aws, aws-us-gov or aws-cn partition",
        )
    return where.console.format(region=region)


def region_of(any_arn: str) -> str:
    parts = any_arn.split(":")
    return parts[3] if len(parts) > 3 else ""


def sns_principal(topic_arn: str) -> str:
    """The service principal SNS uses for a topic: regional in opt-in regions."""
    region = region_of(topic_arn)
    return f"sns.{region}.amazonaws.com" if region in OPT_IN_REGIONS else SNS_PRINCIPAL


def delivery_principal(topic_arn: str, resource_arn: str) -> str:
    """The SNS principal a subscribed queue's (or key's) policy must name for this topic.

    Across regions it depends on both ends: a topic in a default region delivering to a queue in an opt-in region
    signs as the queue region's principal; from an opt-in region to a default one, as the topic region's.
    """
    target = region_of(resource_arn)
    if target in OPT_IN_REGIONS:
        return f"sns.{target}.amazonaws.com"
    return sns_principal(topic_arn)
