"""Read-only boto3 calls shared by trace and audit: clients, paging, SNS, SQS, KMS, IAM, CloudWatch and Logs."""
