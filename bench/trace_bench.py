"""Time `obs trace` over 10,000 failure events in one window, against moto in server mode.

Run: .venv/bin/python bench/trace_bench.py [--events N] [--queues N] [--engine filter|insights]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import boto3
from moto.server import ThreadedMotoServer

from sync.aws.core.failures import Window
from sync.aws.core.target import TraceTarget
from sync.aws.reads.clients import connect
from sync.aws.tracing.report import render_table
from sync.aws.tracing.tracer import Options, trace

if TYPE_CHECKING:
    from mypy_boto3_logs.type_defs import InputLogEventTypeDef

REGION = "us-east-1"
ACCOUNT = "123456789012"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sns-delivery-status"
CAUSES = [
    ("AccessDenied", "Access to the resource is denied.", 403),
    ("KMS.AccessDeniedException", "null (Service: AWSKMS; Status Code: 400; Error Code: AccessDeniedException)", 400),
    ("AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.", 400),
    ("KMS.DisabledException", "The key is disabled.", 400),
    ("InvalidParameterValue", "Number of message attributes [11] exceeds the maximum allowed [10].", 400),
]


def event(topic: str, queue: str, index: int, published: datetime) -> str:
    code, message, status = CAUSES[index % len(CAUSES)]
    response = {"ErrorCode": code, "ErrorMessage": message, "sqsRequestId": "Unrecoverable"}
    doc = {
        "notification": {
            "messageMD5Sum": "4fbd6baa3908ceecb6d3a49314bc1d71",
            "messageId": str(uuid.uuid4()),
            "topicArn": topic,
            "timestamp": published.strftime("%Y-%m-%d %H:%M:%S.") + f"{published.microsecond // 1000:03d}",
        },
        "delivery": {
            "deliveryId": str(uuid.uuid4()),
            "destination": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue}",
            "providerResponse": json.dumps(response, separators=(",", ":")),
            "dwellTimeMs": 37,
            "attempts": 1,
            "statusCode": status,
        },
        "status": "FAILURE",
    }
    return json.dumps(doc, separators=(",", ":"))


def seed(endpoint: str, count: int, queues: int, now: datetime) -> str:
    """A topic with logging on, a few queues, and `count` failures spread over the last 50 minutes."""
    sns = boto3.client("sns", endpoint_url=endpoint, region_name=REGION)
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=REGION)
    logs = boto3.client("logs", endpoint_url=endpoint, region_name=REGION)
    topic = sns.create_topic(Name="prod-jobs-critical")["TopicArn"]
    names = [f"prod-queue-{n}" for n in range(queues)]
    for name in names:
        sqs.create_queue(QueueName=name)
    group = f"sns/{REGION}/{ACCOUNT}/prod-jobs-critical/Failure"
    logs.create_log_group(logGroupName=group)
    step = timedelta(minutes=50) / count
    for stream in range(4):  # SNS writes from several hosts: interleaved streams
        name = str(uuid.uuid4())
        logs.create_log_stream(logGroupName=group, logStreamName=name)
        mine = [i for i in range(count) if i % 4 == stream]
        for start in range(0, len(mine), 1000):
            batch: list[InputLogEventTypeDef] = []
            for i in mine[start : start + 1000]:
                published = now - timedelta(minutes=55) + i * step
                stamp = int((published + timedelta(seconds=18)).timestamp() * 1000)
                batch.append({"timestamp": stamp, "message": event(topic, names[i % queues], i, published)})
            logs.put_log_events(logGroupName=group, logStreamName=name, logEvents=batch)
    return topic


def add_role(parsed: dict[str, Any], **_: object) -> None:
    """moto stores the feedback role but never returns it; report it as AWS would."""
    parsed.get("Attributes", {})["SQSFailureFeedbackRoleArn"] = ROLE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--queues", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="traces to time; the median is reported")
    parser.add_argument("--engine", choices=("filter", "insights"), default="filter")
    parser.add_argument("--show", action="store_true", help="print the report too")
    options = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    for name, value in {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_MAX_ATTEMPTS": "1",
    }.items():
        os.environ[name] = value
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        now = datetime.now(UTC)
        began = time.perf_counter()
        topic = seed(endpoint, options.events, options.queues, now)
        seeded = time.perf_counter() - began
        clients = connect(REGION, endpoint)
        clients.sns.meta.events.register("after-call.sns.GetTopicAttributes", add_role)
        times = []
        for _ in range(max(1, options.repeat)):
            began = time.perf_counter()
            window = Window(now - timedelta(hours=1), now)
            result = trace(clients, TraceTarget(topic), window, options=Options(engine=options.engine))
            report = render_table(result)
            times.append(time.perf_counter() - began)
        took = statistics.median(times)
    finally:
        server.stop()
    if options.show:
        print(report)
    print(f"seeded {options.events} failure events in {seeded:.1f} s", file=sys.stderr)
    found, events = len(result.findings), result.tally.events
    how = f"with {options.engine} (median of {len(times)})"
    print(f"traced {found} failed messages from {events} events in {took:.2f} s {how}")
    return 0 if len(result.findings) == options.events else 1


if __name__ == "__main__":
    sys.exit(main())
