"""Pure: where each Datadog AWS-integration metric the catalogue's monitors read comes from in CloudWatch, so
`obs backtest` can read the same series from the source: namespace, metric name, the dimensions its Datadog tags
stand for, and the statistic.

How Datadog names them: the CloudWatch metric name in snake case under `aws.<service>.`; a gauge without a suffix
is the Average statistic, `.maximum` / `.minimum` the Maximum / Minimum, and a metric Datadog lists as a count is
the Sum (https://docs.datadoghq.com/integrations/amazon_web_services/ and each service's page below). Each
dimension becomes a lower-case tag (QueueName -> queuename); every metric also carries `region` and
the account under the tag key the environment declares (`account_tag`), which choose the account and
region read, not a dimension.

Sources:
- SQS: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
  (namespace AWS/SQS, dimension QueueName, 1-minute points) and https://docs.datadoghq.com/integrations/amazon_sqs/
- SNS: https://docs.aws.amazon.com/sns/latest/dg/sns-monitoring-using-cloudwatch.html (namespace AWS/SNS,
  dimension TopicName) and https://docs.datadoghq.com/integrations/amazon_sns/
- ECS utilisation: https://docs.aws.amazon.com/AmazonECS/latest/developerguide/available-metrics.html (namespace
  AWS/ECS, dimensions ClusterName and ServiceName) and https://docs.datadoghq.com/integrations/amazon_ecs/
- ECS task counts: Datadog reads `aws.ecs.service.running` / `.desired` from the ECS API (DescribeServices), which
  keeps no history. CloudWatch holds the same counts only with Container Insights enabled, as RunningTaskCount and
  DesiredTaskCount in ECS/ContainerInsights
  (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-metrics-ECS.html): without
  it a monitor that reads them is not backtested.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """One Datadog metric's CloudWatch origin: `dimensions` maps each Datadog tag to its dimension name."""

    namespace: str
    metric: str
    statistic: str
    dimensions: tuple[tuple[str, str], ...]
    note: str = ""  # how the CloudWatch series differs from what Datadog holds, when it does


_QUEUE = (("queuename", "QueueName"),)
_TOPIC = (("topicname", "TopicName"),)
_SERVICE = (("clustername", "ClusterName"), ("servicename", "ServiceName"))
_INSIGHTS = (
    "read from Container Insights: Datadog takes it from the ECS API, and CloudWatch has it only where Container "
    "Insights is enabled on the cluster"
)

TABLE: Mapping[str, Source] = {
    # SQS gauges (Average), reported each minute while the queue is active.
    "aws.sqs.approximate_age_of_oldest_message": Source("AWS/SQS", "ApproximateAgeOfOldestMessage", "Average", _QUEUE),
    "aws.sqs.approximate_number_of_messages_visible": Source(
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", "Average", _QUEUE
    ),
    "aws.sqs.approximate_number_of_messages_not_visible": Source(
        "AWS/SQS", "ApproximateNumberOfMessagesNotVisible", "Average", _QUEUE
    ),
    # SQS counters: Datadog lists them as counts, the Sum of each minute.
    "aws.sqs.number_of_messages_deleted": Source("AWS/SQS", "NumberOfMessagesDeleted", "Sum", _QUEUE),
    "aws.sqs.number_of_messages_received": Source("AWS/SQS", "NumberOfMessagesReceived", "Sum", _QUEUE),
    # SNS counters (Sum).
    "aws.sns.number_of_messages_published": Source("AWS/SNS", "NumberOfMessagesPublished", "Sum", _TOPIC),
    "aws.sns.number_of_notifications_failed": Source("AWS/SNS", "NumberOfNotificationsFailed", "Sum", _TOPIC),
    # ECS service utilisation: the suffix names the statistic.
    "aws.ecs.service.cpuutilization.maximum": Source("AWS/ECS", "CPUUtilization", "Maximum", _SERVICE),
    "aws.ecs.service.memory_utilization.maximum": Source("AWS/ECS", "MemoryUtilization", "Maximum", _SERVICE),
    # ECS task counts: the same numbers, from another collector (see the module's note).
    "aws.ecs.service.running": Source("ECS/ContainerInsights", "RunningTaskCount", "Average", _SERVICE, _INSIGHTS),
    "aws.ecs.service.desired": Source("ECS/ContainerInsights", "DesiredTaskCount", "Average", _SERVICE, _INSIGHTS),
}


@dataclass(frozen=True)
class Read:
    """One CloudWatch series to read: a metric of the table under the dimensions a query's tags fix."""

    name: str  # the Datadog metric
    source: Source
    dimensions: tuple[tuple[str, str], ...]  # (dimension name, value), in the table's order
    region: str
    account: str

    def tags(self, account_tag: str | None) -> dict[str, str]:
        """The tags Datadog gives the series: each dimension's, the region's and the account's."""
        by_dim = {dim: tag for tag, dim in self.source.dimensions}
        found = {by_dim[dim]: value for dim, value in self.dimensions}
        found["region"] = self.region
        if account_tag:
            found[account_tag] = self.account
        return found


def read_for(
    metric: str, tags: tuple[tuple[str, str], ...], region: str, account: str, account_tag: str | None = None
) -> Read | str:
    """The CloudWatch series a Datadog metric query with these tag filters reads, or why there is none: a
    metric the table lacks, a tag that is no dimension of it, or a dimension the query leaves open (a query
    that merges many series cannot be rebuilt from one)."""
    source = TABLE.get(metric)
    if source is None:
        return f"{metric} has no CloudWatch source obs knows"
    given = dict(tags)
    by_tag = dict(source.dimensions)
    extra = sorted(set(given) - set(by_tag) - {"region", account_tag})
    if extra:
        return f"{metric} is filtered by {', '.join(extra)}, which is not a CloudWatch dimension of it"
    missing = [tag for tag, _ in source.dimensions if tag not in given]
    if missing:
        return f"{metric} is not narrowed to one series: it has no {', '.join(missing)} filter"
    dims = tuple((dim, given[tag]) for tag, dim in source.dimensions)
    return Read(metric, source, dims, given.get("region", region), given.get(account_tag or "", account))
