#!/bin/sh
# Installs refsync for production from its npm package, as the image does (Dockerfile) and as
# test/release/install.test.ts tries it: the package unpacked into an empty folder, then exactly the
# dependency versions its npm-shrinkwrap.json holds (the lockfile CI ran with), without dev or
# optional dependencies (the runtime's own Node runs it; PGlite is for `refsync demo` and for
# commands without DATABASE_URL, never a server) and without install scripts (no dependency needs
# one to run refsync, so none gets to run one). One script for both, so they cannot drift.
#
#   sh scripts/install-package.sh refsync-0.3.0.tgz /app
set -eu
tarball=$1
dir=$2
mkdir -p "$dir"
tar -xzf "$tarball" -C "$dir" --strip-components=1
cd "$dir"
npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund
