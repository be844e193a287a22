#!/usr/bin/env bash
# Renders each app with kustomize + inject-fn into rendered/ and fails when
# the committed rendered manifests are stale: someone changed an app or the
# sidecar template without re-rendering. Run it in CI (see
# github-actions.yaml) and locally before committing.
#
# Needs: kustomize (or $KUSTOMIZE), inject-fn on PATH, git.
set -euo pipefail
cd "$(dirname "$0")"
kustomize="${KUSTOMIZE:-kustomize}"

mkdir -p rendered
for app in app; do
  "${kustomize}" build --enable-alpha-plugins --enable-exec "${app}" > "rendered/${app}.yaml"
done

if [[ -n "$(git status --porcelain -- rendered/)" ]]; then
  git --no-pager diff -- rendered/ >&2
  echo "rendered/ is stale: run examples/ci/check.sh and commit the result" >&2
  exit 1
fi
echo "rendered/ is up to date"
