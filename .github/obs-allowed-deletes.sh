#!/usr/bin/env bash
# Writes max_deletes=N to $GITHUB_OUTPUT when a review allowed this sync to delete more than obs's own
# limit: a manual run's input (its environment's reviewers approve the run), or the label
# obs-allow-deletes on the pull request this push merged, which allows exactly the deletions that merge
# makes in this environment, and nothing for the next merge.
set -euo pipefail

if [ -n "${MAX_DELETES:-}" ]; then
  case "$MAX_DELETES" in
    *[!0-9]*) echo "max_deletes must be a whole number, not '$MAX_DELETES'" >&2; exit 1 ;;
  esac
  echo "max_deletes=$MAX_DELETES" >> "$GITHUB_OUTPUT"
  exit 0
fi
[ "$GITHUB_EVENT_NAME" = push ] || exit 0

labels=$(gh api "repos/$GITHUB_REPOSITORY/commits/$GITHUB_SHA/pulls" \
  --jq '.[] | select(.merged_at != null) | .labels[].name')
if ! grep -qx 'obs-allow-deletes' <<< "$labels"; then
  exit 0
fi
deletes=$(obs diff --base HEAD^ --head HEAD --env "$OBS_ENV" --format json \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["delete"])')
if [ "$deletes" -gt 0 ]; then
  echo "the merged pull request is labelled obs-allow-deletes: this sync may delete the $deletes objects it removes from $OBS_ENV"
  echo "max_deletes=$deletes" >> "$GITHUB_OUTPUT"
fi
