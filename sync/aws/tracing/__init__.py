"""`obs trace`: name the messages that failed SNS -> SQS delivery, and why."""
