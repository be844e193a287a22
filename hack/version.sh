#!/bin/sh
# Prints the version of the working tree, for `make` (VERSION) and releases.
# Every version is semantic (krew's spec.version must be), and an untagged
# build says so:
#
#   HEAD tagged vX.Y.Z                 vX.Y.Z
#   commits after the tag vX.Y.Z       vX.Y.(Z+1)-dev+COMMIT   (sorts after vX.Y.Z, before the next)
#   no vX.Y.Z tag at all               v0.0.0-dev+COMMIT
#   uncommitted changes                ...+COMMIT.dirty (or vX.Y.Z+dirty on a tag)
#   not a git checkout                 v0.0.0-dev
#
# COMMIT is the short commit (git rev-parse --short HEAD).
set -eu

commit=$(git rev-parse --short HEAD 2>/dev/null) || { echo v0.0.0-dev; exit 0; }
dirty=
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	dirty=dirty
fi

if tag=$(git describe --tags --exact-match --match 'v[0-9]*.[0-9]*.[0-9]*' HEAD 2>/dev/null) &&
	echo "$tag" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+$'; then
	echo "$tag${dirty:++dirty}"
	exit 0
fi

base=v0.0.0
if tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' HEAD 2>/dev/null) &&
	echo "$tag" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+$'; then
	base=$(echo "$tag" | awk -F. '{ printf "%s.%s.%d", $1, $2, $3 + 1 }')
fi
echo "$base-dev+$commit${dirty:+.dirty}"
