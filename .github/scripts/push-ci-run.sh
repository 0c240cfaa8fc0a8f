#!/usr/bin/env bash
# Has ci.yml already passed on this commit in a push-triggered run? Prints
# passed=true or passed=false to $GITHUB_OUTPUT: true when the latest such run
# succeeded; while it is queued or in progress, waits for it (WAIT_MINUTES at
# most, then false); false when there is none or it did not succeed, so the
# caller runs ci.yml itself.
#
#   REPO=owner/name SHA=<commit> [WORKFLOW=ci.yml] [WAIT_MINUTES=150] [POLL_SECONDS=60] \
#     bash .github/scripts/push-ci-run.sh
#
# Needs gh and jq, and GH_TOKEN with read access to Actions.
set -euo pipefail

: "${REPO:?REPO (owner/name) is not set}"
: "${SHA:?SHA (the commit) is not set}"
workflow=${WORKFLOW:-ci.yml}
wait_minutes=${WAIT_MINUTES:-150}
poll=${POLL_SECONDS:-60}
deadline=$(($(date +%s) + wait_minutes * 60))

passed=false
while :; do
  runs=$(gh run list --repo "$REPO" --workflow "$workflow" --commit "$SHA" --event push --limit 1 \
    --json status,conclusion,url)
  status=$(jq -r '.[0].status // ""' <<< "$runs")
  conclusion=$(jq -r '.[0].conclusion // ""' <<< "$runs")
  url=$(jq -r '.[0].url // ""' <<< "$runs")
  if [ -z "$status" ]; then
    echo "No push-triggered $workflow run of $SHA: running $workflow here."
    break
  fi
  if [ "$status" = completed ]; then
    if [ "$conclusion" = success ]; then
      echo "$workflow passed on $SHA in a push-triggered run: $url"
      passed=true
    else
      echo "The push-triggered $workflow run of $SHA ended $conclusion ($url): running $workflow here."
    fi
    break
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "The push-triggered $workflow run of $SHA is still $status after $wait_minutes minutes ($url): running $workflow here."
    break
  fi
  echo "The push-triggered $workflow run of $SHA is $status ($url); waiting."
  sleep "$poll"
done
echo "passed=$passed" >> "$GITHUB_OUTPUT"
