"""obs: observability as code for SNS -> SQS -> ECS job systems monitored in Datadog."""
