#!/usr/bin/env bash
# Runs the typecheck and the whole test suite again on Nest 11, in a scratch copy with its own locked install,
# so the `^11 || ^12` peer range is proven and the main checkout's node_modules stays on Nest 12.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp "$root/test/nest11/package.json" "$root/test/nest11/package-lock.json" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
cp "$root/package.json" "$root/README.md" "$root/tsconfig.json" "$root/tsconfig.build.json" "$root/vitest.config.ts" "$work/"
cp -R "$root/lib" "$root/test" "$root/sample" "$root/docs" "$root/scripts" "$work/"
# The documentation links to the bench's figures, and its link check runs here too.
mkdir -p "$work/bench" && cp "$root/bench/README.md" "$work/bench/"

cd "$work"
echo "Nest $(node -p "require('@nestjs/core/package.json').version") / @nestjs/axios $(node -p "require('@nestjs/axios/package.json').version")"
npx tsc -p tsconfig.json --noEmit
npm run build
npx vitest run
