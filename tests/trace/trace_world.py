"""Build SNS/SQS/KMS/Logs state in moto and seed delivery-status logs the way SNS writes them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3

from sync.aws.reads.clients import Clients, connect
from sync.aws.reads.logs import millis

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_iam import IAMClient
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_logs import CloudWatchLogsClient
    from mypy_boto3_logs.type_defs import InputLogEventTypeDef
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sqs import SQSClient

ACCOUNT = "123456789012"  # moto's default account
REGION = "us-east-1"
EVENTS = Path(__file__).parent / "fixtures" / "events"
_BATCH = 1000


def sample(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return doc


def failure_event(
    name: str, *, message_id: str, topic_arn: str, queue: str, published: datetime, **delivery: object
) -> str:
    """A sample event moved to this test's topic, queue, message and time, compact as SNS writes it."""
    doc = sample(name)
    doc["notification"].update(messageId=message_id, topicArn=topic_arn, timestamp=stamp(published))
    doc["delivery"].update({"destination": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue}", **delivery})
    doc["delivery"]["deliveryId"] = str(uuid.uuid4())
    return json.dumps(doc, separators=(",", ":"))


def stamp(moment: datetime) -> str:
    """The publish time as SNS logs it: 'YYYY-MM-DD HH:MM:SS.mmm' in UTC."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


@cache
def _clients(
    endpoint: str, region: str
) -> tuple[SNSClient, SQSClient, CloudWatchLogsClient, CloudWatchClient, KMSClient, IAMClient]:
    """The set-up's clients: they keep nothing of a test (the moto server is emptied before each, and every World
    is made under the same test credentials), and building them costs more than most tests' calls."""
    return (
        boto3.client("sns", endpoint_url=endpoint, region_name=region),
        boto3.client("sqs", endpoint_url=endpoint, region_name=region),
        boto3.client("logs", endpoint_url=endpoint, region_name=region),
        boto3.client("cloudwatch", endpoint_url=endpoint, region_name=region),
        boto3.client("kms", endpoint_url=endpoint, region_name=region),
        boto3.client("iam", endpoint_url=endpoint, region_name=region),
    )


class World:
    """The AWS side of one test in one region, created through boto3 against the moto server."""

    def __init__(self, endpoint: str, region: str = REGION) -> None:
        self.endpoint = endpoint
        self.region = region
        self.failure_roles: dict[str, str] = {}
        self.sns, self.sqs, self.logs, self.cloudwatch, self.kms, self.iam = _clients(endpoint, region)

    def clients(self, region: str = REGION, endpoint_url: str | None = None) -> Clients:
        """The tracer's own clients, reporting the feedback roles moto accepts but never returns."""
        clients = connect(region, endpoint_url)
        clients.sns.meta.events.register("after-call.sns.GetTopicAttributes", self._add_feedback_role)
        return clients

    def _add_feedback_role(self, parsed: dict[str, Any], **_: object) -> None:
        attributes = parsed.get("Attributes", {})
        role = self.failure_roles.get(attributes.get("TopicArn", ""))
        if role:
            attributes["SQSFailureFeedbackRoleArn"] = role

    def topic(self, name: str) -> str:
        attributes = {"FifoTopic": "true"} if name.endswith(".fifo") else {}
        return self.sns.create_topic(Name=name, Attributes=attributes)["TopicArn"]

    def enable_logging(self, topic_arn: str) -> None:
        """Delivery-status logging through a role SNS can assume and write logs with, as the console makes it."""
        partition = topic_arn.split(":")[1]  # the role lives in the topic's partition
        role = f"arn:{partition}:iam::{ACCOUNT}:role/sns-delivery-status"
        names = [r["RoleName"] for r in self.iam.list_roles()["Roles"]]
        if "sns-delivery-status" not in names:
            trust = {"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sts:AssumeRole"}
            self.iam.create_role(
                RoleName="sns-delivery-status",
                AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [trust]}),
            )
            writes = {
                "Effect": "Allow",
                "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": "arn:aws:logs:*:*:*",
            }
            self.iam.put_role_policy(
                RoleName="sns-delivery-status",
                PolicyName="delivery-status-logs",
                PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [writes]}),
            )
        self.sns.set_topic_attributes(
            TopicArn=topic_arn, AttributeName="SQSFailureFeedbackRoleArn", AttributeValue=role
        )
        self.failure_roles[topic_arn] = role

    def queue(self, name: str, region: str = "", **attributes: str) -> str:
        region = region or self.region
        sqs = self.sqs if region == self.region else boto3.client("sqs", endpoint_url=self.endpoint, region_name=region)
        if name.endswith(".fifo"):
            attributes = {"FifoQueue": "true", **attributes}
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]  # type: ignore[arg-type]
        return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def url(self, name: str) -> str:
        return self.sqs.get_queue_url(QueueName=name)["QueueUrl"]

    def subscribe(self, topic_arn: str, queue_arn: str, *, raw: bool = False, dlq_arn: str = "") -> str:
        attributes = {"RawMessageDelivery": "true"} if raw else {}
        if dlq_arn:
            attributes["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": dlq_arn})
        return self.sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn, Attributes=attributes)[
            "SubscriptionArn"
        ]

    def put_events(self, group: str, events: Iterable[tuple[datetime, str]], stream: str = "") -> None:
        """Events in chronological order, in batches, as moto (and AWS) require."""
        existing = self.logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]
        if not any(g["logGroupName"] == group for g in existing):
            self.logs.create_log_group(logGroupName=group)
        stream = stream or str(uuid.uuid4())  # SNS names streams with opaque UUIDs
        self.logs.create_log_stream(logGroupName=group, logStreamName=stream)
        ordered = sorted(events, key=lambda e: e[0])
        for start in range(0, len(ordered), _BATCH):
            batch: list[InputLogEventTypeDef] = [
                {"timestamp": millis(t), "message": m} for t, m in ordered[start : start + _BATCH]
            ]
            rejected = self.logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=batch)
            assert "rejectedLogEventsInfo" not in rejected, rejected

    def put_failed_metric(self, topic_name: str, points: Sequence[tuple[datetime, float]]) -> None:
        self.cloudwatch.put_metric_data(
            Namespace="AWS/SNS",
            MetricData=[
                {
                    "MetricName": "NumberOfNotificationsFailed",
                    "Dimensions": [{"Name": "TopicName", "Value": topic_name}],
                    "Timestamp": moment,
                    "Value": value,
                    "Unit": "Count",
                }
                for moment, value in points
            ],
        )

    def publish(self, topic_arn: str, body: str, **fifo: str) -> str:
        return self.sns.publish(TopicArn=topic_arn, Message=body, **fifo)["MessageId"]  # type: ignore[arg-type]


def failure_group(topic_arn: str) -> str:
    _, _, _, region, account, name = topic_arn.split(":", 5)
    return f"sns/{region}/{account}/{name}/Failure"


def success_group(topic_arn: str) -> str:
    return failure_group(topic_arn).removesuffix("/Failure")
