#!/usr/bin/env bash
# Runs firebase-tools' own Storage conformance suite
# (scripts/storage-emulator-integration/conformance/*.test.ts, its firebase.json
# and storage.rules as they are) against loupe, as firebase-tools' run.sh runs
# it: `mocha scripts/storage-emulator-integration/conformance/*.test.ts` from
# the root of a firebase-tools tree, with a `firebase` first on PATH that is
# loupe. Nothing of firebase-tools enters this repository: the tree and its npm
# packages (npm ci, its shrinkwrap) live in a cache folder.
#
# usage: run.sh LOUPE [FIREBASE_TOOLS]
#   LOUPE           the loupe binary
#   FIREBASE_TOOLS  a firebase-tools working tree, or a git directory whose
#                   HEAD is exported. Without it the run is skipped, saying so.
# environment: STORAGE_CONFORMANCE_CACHE (default ~/.cache/loupe-storage-conformance),
#   CHROMIUM (default: chromium on PATH), MOCHA_ARGS (more arguments for mocha,
#   e.g. --timeout 10000 where a loaded machine makes the 2 s of firebase-tools'
#   .mocharc.yml too short, or --grep PATTERN).
#
# The suite's browser files open https://example.com and load the Firebase JS
# SDK from https://www.gstatic.com; offline-web.mjs serves both from this
# machine (the SDK from the npm package of the version the suite names), so the
# run needs the npm registry once and no other network.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
loupe=$(realpath "${1:?usage: run.sh LOUPE [FIREBASE_TOOLS]}")
source=${2:-}
if [ -z "$source" ]; then
  echo "storage-conformance: skipped: no firebase-tools checkout (give its path: make storage-conformance FIREBASE_TOOLS=/path/to/firebase-tools)"
  exit 0
fi
suite=scripts/storage-emulator-integration/conformance
cache=${STORAGE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loupe-storage-conformance}
chromium=${CHROMIUM:-$(command -v chromium || true)}
for tool in node npm openssl; do
  command -v "$tool" >/dev/null || { echo "storage-conformance: $tool is needed"; exit 1; }
done
[ -n "$chromium" ] || { echo "storage-conformance: chromium is needed (make chromium installs it)"; exit 1; }

# The firebase-tools tree, refreshed from the source on every run (a working
# tree's files but .git and node_modules, or a git directory's HEAD); its
# node_modules stay, reinstalled when npm-shrinkwrap.json changes.
if [ -e "$source/$suite" ]; then
  from=$source
  copy() { (cd "$source" && tar -c --exclude=./.git --exclude=./node_modules .); }
elif git --git-dir="$source" cat-file -e "HEAD:$suite" 2>/dev/null; then
  from="$source at $(git --git-dir="$source" rev-parse --short HEAD)"
  copy() { git --git-dir="$source" archive --format=tar HEAD; }
else
  echo "storage-conformance: $source has no $suite: not a firebase-tools checkout"
  exit 1
fi
tree=$cache/firebase-tools
mkdir -p "$tree"
find "$tree" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
copy | tar -x -C "$tree"
if ! cmp -s "$tree/npm-shrinkwrap.json" "$tree/node_modules/.loupe-shrinkwrap.json"; then
  echo "storage-conformance: npm ci in $tree (firebase-tools' own packages; puppeteer drives $chromium)"
  (cd "$tree" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$tree/npm-shrinkwrap.json" "$tree/node_modules/.loupe-shrinkwrap.json"
fi

# The Firebase JS SDK versions the browser files load, unpacked from npm.
gstatic=$cache/gstatic
for v in $(grep -ho 'www\.gstatic\.com/firebasejs/[0-9][0-9.]*/' "$tree/$suite"/*.ts | cut -d/ -f3 | sort -u); do
  if [ ! -e "$gstatic/$v/firebase-app-compat.js" ]; then
    mkdir -p "$gstatic/$v"
    (cd "$gstatic/$v" && npm pack --silent "firebase@$v" >/dev/null &&
      tar -xzf "firebase-$v.tgz" --strip-components=1 --wildcards 'package/firebase-*-compat.js' && rm "firebase-$v.tgz")
  fi
done
if [ ! -e "$cache/offline-web.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=offline-web \
    -keyout "$cache/offline-web.key" -out "$cache/offline-web.pem" 2>/dev/null
fi

# The suite's firebase.json fixes these ports.
for port in 4000 9099 9199; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "storage-conformance: port $port is in use, and the suite's firebase.json names it (hub 4000, auth 9099, storage 9199)"
    exit 1
  fi
done

bin=$cache/bin
mkdir -p "$bin"
printf '#!/bin/sh\nexec %q "$@"\n' "$loupe" >"$bin/firebase"
printf '#!/bin/sh\nexec %q --no-sandbox --disable-gpu --disable-dev-shm-usage --ignore-certificate-errors --proxy-server=http://127.0.0.1:$OFFLINE_WEB_PORT "$@"\n' "$chromium" >"$bin/chromium"
chmod +x "$bin/firebase" "$bin/chromium"

exec 4< <(exec node "$here/offline-web.mjs" "$gstatic" "$cache/offline-web.key" "$cache/offline-web.pem")
web=$!
trap 'kill "$web" 2>/dev/null || true' EXIT
read -r OFFLINE_WEB_PORT <&4
export OFFLINE_WEB_PORT PUPPETEER_EXECUTABLE_PATH=$bin/chromium PATH=$bin:$PATH

echo "storage-conformance: firebase-tools $(node -p "require('$tree/package.json').version") from $from against $("$loupe" --version)"
cd "$tree"
# shellcheck disable=SC2086 # MOCHA_ARGS is words
node_modules/.bin/mocha "$suite"/*.test.ts ${MOCHA_ARGS:-}
