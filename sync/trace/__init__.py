"""`obs trace`: name the messages that failed SNS -> SQS delivery, and why (boto3 lives only here)."""
