"""boto3 clients for the tracer, and the translation of AWS failures into ObsError."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import boto3
import botocore.loaders
import botocore.session
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
)

from sync.errors import ObsError
from sync.expand import placement

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_iam import IAMClient
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_logs import CloudWatchLogsClient
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sts import STSClient

NONEXISTENT_QUEUE = frozenset({"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"})
DENIED = frozenset({"AccessDenied", "AccessDeniedException", "AuthorizationError", "UnauthorizedOperation"})
_MISSING = {"ResourceNotFoundException", "NotFound", "NotFoundException", *NONEXISTENT_QUEUE}
_BAD_CREDENTIALS = {
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "ExpiredToken",
    "ExpiredTokenException",
    "SignatureDoesNotMatch",
    "InvalidSignatureException",
}


LOGS_ATTEMPTS = 10  # FilterLogEvents allows 5 TPS per account and region: a throttle slows a read, not ends it


_CONFIG = Config(retries={"mode": "standard"}, user_agent_extra="obs-trace")
_LOGS = Config(retries={"mode": "adaptive", "total_max_attempts": LOGS_ATTEMPTS})
C = TypeVar("C")


class _Service(Generic[C]):
    """A client of one AWS service, built the first time it is used (a client takes a few hundredths of a
    second to build, and most commands use two or three of the seven)."""

    def __init__(self, name: str, config: Config | None = None) -> None:
        self._name = name
        self._config = _CONFIG.merge(config) if config else _CONFIG

    def __get__(self, clients: Clients, owner: type[Clients]) -> C:
        if self._name not in clients.made:
            with aws_errors("connect to AWS"):
                clients.made[self._name] = clients.session.client(
                    self._name,  # type: ignore[call-overload]
                    endpoint_url=clients.endpoint_url,
                    config=self._config,
                )
        client: C = clients.made[self._name]
        return client


class Clients:
    """The AWS clients one command needs in one region, and the same services in another region."""

    sns: _Service[SNSClient] = _Service("sns")
    sqs: _Service[SQSClient] = _Service("sqs")
    logs: _Service[CloudWatchLogsClient] = _Service("logs", _LOGS)
    cloudwatch: _Service[CloudWatchClient] = _Service("cloudwatch")
    kms: _Service[KMSClient] = _Service("kms")
    sts: _Service[STSClient] = _Service("sts")
    iam: _Service[IAMClient] = _Service("iam")

    def __init__(self, region: str, endpoint_url: str | None = None) -> None:
        core = core_session()
        self.session = boto3.session.Session(botocore_session=core, region_name=region)
        self.endpoint_url = endpoint_url
        self.region = region
        self.made: dict[str, Any] = {}
        self._others: dict[str, Clients] = {}

    def in_region(self, region: str) -> Clients:
        """Clients for a queue's own region: SNS delivers to queues in other regions too."""
        if not region or region == self.region:
            return self
        if region not in self._others:
            self._others[region] = Clients(region, self.endpoint_url)
        return self._others[region]


@cache
def _shared_loader() -> botocore.loaders.Loader:
    """One reader of botocore's service models for every session: each session would otherwise parse them
    again (a quarter of a second for the seven services, a tenth for the regions' endpoints)."""
    return botocore.loaders.create_loader()


def core_session() -> botocore.session.Session:
    """A botocore session that reads the service models parsed once for every session."""
    core = botocore.session.get_session()
    core.register_component("data_loader", _shared_loader())
    return core


# How a command gets its AWS clients: `connect`, or a test's stand-in pointed at a local endpoint.
Connector = Callable[[str, str | None], "Clients"]


def connect(region: str, endpoint_url: str | None = None) -> Clients:
    """Clients from the standard credential chain; AWS_ENDPOINT_URL is honoured by boto3 itself."""
    with aws_errors("connect to AWS"):
        return Clients(region, endpoint_url)


def check_region(partition: str, region: str, where: str) -> None:
    """Refuse a region botocore does not know, so a typo is not reported as a network failure, and a region
    named in the wrong partition (arn:aws:sns:us-gov-west-1:...), which no AWS endpoint would answer."""
    session = core_session()
    owners = [p for p in session.get_available_partitions() if region in session.get_available_regions("sns", p)]
    if not owners:
        raise ObsError.of(
            f"{where} names unknown region {region!r} (not an AWS region of partition {partition})",
            "check the spelling (e.g. us-east-1); if the region is new, upgrade boto3",
        )
    if partition not in owners:
        right = placement.arn("sns", region, "<account>", "<topic>")
        raise ObsError.of(
            f"{where} says partition {partition}, but region {region!r} is in partition {owners[0]}",
            f"write the ARN as {right}",
        )


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def caller_account(clients: Clients) -> str:
    """The account the credentials belong to (sts:GetCallerIdentity needs no permission)."""
    with aws_errors("identify the AWS account of the credentials", "sts:GetCallerIdentity"):
        return str(clients.sts.get_caller_identity()["Account"])


@contextmanager
def aws_errors(doing: str, permission: str = "", missing: str = "") -> Iterator[None]:
    """Turn any botocore failure while `doing` into one ObsError that says how to fix it."""
    try:
        yield
    except (NoCredentialsError, PartialCredentialsError) as exc:
        raise ObsError.of(
            f"cannot {doing}: no usable AWS credentials",
            "set AWS_PROFILE (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or run `aws sso login`",
        ) from exc
    except NoRegionError as exc:
        raise ObsError.of(f"cannot {doing}: no AWS region", "set AWS_REGION or pass a topic ARN") from exc
    except EndpointConnectionError as exc:
        raise ObsError.of(
            f"cannot {doing}: AWS endpoint unreachable ({exc.kwargs.get('endpoint_url', '')})",
            "check the network, and AWS_ENDPOINT_URL if it is set",
        ) from exc
    except ClientError as exc:
        code = error_code(exc)
        message = str(exc.response.get("Error", {}).get("Message", "")).rstrip(". ") or code
        if code in _MISSING:
            fix = missing or "check the name, the AWS account and the region"
            raise ObsError.of(f"cannot {doing}: it does not exist ({message})", fix) from exc
        if code in DENIED:
            fix = f"grant {permission} to the caller" if permission else "grant the caller read access"
            raise ObsError.of(f"cannot {doing}: access denied ({message})", fix) from exc
        if code in _BAD_CREDENTIALS:
            raise ObsError.of(
                f"cannot {doing}: AWS rejected the credentials ({code})",
                "refresh them (aws sso login, or new keys) and check AWS_PROFILE",
            ) from exc
        raise ObsError.of(f"cannot {doing}: {code}: {message}", "check the AWS console or retry") from exc
    except BotoCoreError as exc:
        raise ObsError.of(f"cannot {doing}: {exc}", "check the AWS configuration and retry") from exc
