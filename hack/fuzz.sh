#!/usr/bin/env bash
# Runs one fuzz target: hack/fuzz.sh PACKAGE TARGET FUZZTIME.
#
# Go's fuzzing engine sometimes ends a run that found nothing with
# "context deadline exceeded" when its workers answer late at the end of
# -fuzztime on a loaded machine. Such a run wrote no failing input, so it
# is run once more; a run that found a failing input (it says "Failing
# input written to") fails at once, as does a second timeout.
set -uo pipefail
pkg="$1" target="$2" fuzztime="$3"
log="$(mktemp)"
trap 'rm -f "${log}"' EXIT
for attempt in 1 2; do
  go test "${pkg}" -run '^$' -fuzz "^${target}\$" -fuzztime "${fuzztime}" 2>&1 | tee "${log}"
  status=${PIPESTATUS[0]}
  if [[ ${status} == 0 ]]; then
    exit 0
  fi
  if grep -q 'Failing input written to' "${log}" || ! grep -q 'context deadline exceeded' "${log}" || [[ ${attempt} == 2 ]]; then
    exit "${status}"
  fi
  echo "fuzz: ${target}: the engine timed out at the end with no failing input; running it once more" >&2
done
