#!/usr/bin/env bash
# Checks that `npm ci` works from the committed package.json files and lockfile alone,
# as on CI's fresh clone (some registry mirrors lack optional platform packages).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for f in package.json package-lock.json $(git ls-files '*/package.json' | grep -v node_modules); do
  mkdir -p "$dir/$(dirname "$f")"
  cp "$f" "$dir/$f"
done
cd "$dir"
npm ci --ignore-scripts --no-audit --no-fund >/dev/null 2>&1 && echo "npm ci: ok" || { echo "npm ci fails on the committed lockfile"; npm ci --ignore-scripts 2>&1 | grep -E "error" | head -20; exit 1; }
