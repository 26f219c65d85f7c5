"""The AWS side of `obs trace` and `obs audit`: the only code that talks to AWS (boto3 lives only in `reads`)."""
