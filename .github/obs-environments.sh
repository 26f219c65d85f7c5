#!/usr/bin/env bash
# Writes the environments the workflows run for to $GITHUB_OUTPUT, read from the definitions (each
# environments/<name>.yaml is the environment <name>; obs validate holds the file name to the name), so a
# workflow never names an environment the definitions lack:
#   all     every environment, as a JSON list (drift and audit run in each)
#   direct  the ones a merge syncs directly: all but prod, which syncs the plan its approvers saw
#   prod    true when prod is among them
# ONLY, a manual run's input, narrows them to that one, and is refused unless it is one of them.
set -euo pipefail

folder="${OBS_DEFINITIONS:-.}/environments"
if [ ! -d "$folder" ]; then
  echo "no $folder folder: list the definitions folder in OBS_DEFINITIONS" >&2
  exit 1
fi
names=$(find "$folder" -maxdepth 1 -type f \( -name '*.yaml' -o -name '*.yml' \) -printf '%f\n' \
  | sed -E 's/\.ya?ml$//' | LC_ALL=C sort -u)
if [ -z "$names" ]; then
  echo "no environment definitions in $folder" >&2
  exit 1
fi
if [ -n "${ONLY:-}" ]; then
  if ! grep -qxF -- "$ONLY" <<< "$names"; then
    echo "unknown environment '$ONLY': use one of: $(paste -sd, <<< "$names" | sed 's/,/, /g')" >&2
    exit 1
  fi
  names=$ONLY
fi
as_json() { jq -Rcs 'split("\n") | map(select(. != ""))'; }
{
  echo "all=$(as_json <<< "$names")"
  echo "direct=$(grep -vx prod <<< "$names" | as_json)"
  if grep -qx prod <<< "$names"; then echo "prod=true"; else echo "prod=false"; fi
} >> "$GITHUB_OUTPUT"
