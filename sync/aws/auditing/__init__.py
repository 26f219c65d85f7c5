"""`obs audit`: judge an environment's live SNS -> SQS wiring against its definitions."""
