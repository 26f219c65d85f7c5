#!/usr/bin/env bash
# AWS credentials from GitHub's OIDC token: boto3 assumes AWS_ROLE_ARN with the token file, so no AWS key is stored.
set -euo pipefail
if [ -z "${AWS_ROLE_ARN:-}" ]; then
  echo "set the variable OBS_AUDIT_ROLE_ARN on this GitHub environment to a read-only role that trusts GitHub's" \
    "OIDC provider for this environment only (sub repo:OWNER/REPO:environment:<name>; see docs/setup/aws.md)" >&2
  exit 1
fi
token="$RUNNER_TEMP/aws-web-identity-token"
curl -sSf -H "Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN" \
  "$ACTIONS_ID_TOKEN_REQUEST_URL&audience=sts.amazonaws.com" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["value"])' >"$token"
{
  echo "AWS_WEB_IDENTITY_TOKEN_FILE=$token"
  echo "AWS_ROLE_ARN=$AWS_ROLE_ARN"
  echo "AWS_ROLE_SESSION_NAME=obs-audit"
} >>"$GITHUB_ENV"
