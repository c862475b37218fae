#!/usr/bin/env bash
# Installs what make bench-peers needs outside the repository, in the cache
# folder $1: firebase-tools $2 from npm (its Storage emulator), and a stand-in
# for the Java rules runtime that emulator starts and would download
# (RulesStandIn.java, compiled with the machine's JDK). Whatever cannot be
# installed is said, and bench-peers skips its rows.
set -u
cache=$1 version=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$cache/emulators"
installed=$(node -p "require('$cache/node_modules/firebase-tools/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$version" ]; then
  if command -v npm >/dev/null; then
    echo "bench-peers: installing firebase-tools@$version into $cache"
    npm i --prefix "$cache" "firebase-tools@$version" --no-audit --no-fund --loglevel=error >/dev/null ||
      echo "bench-peers: firebase-tools could not be installed: the Storage rows will be skipped"
  else
    echo "bench-peers: no npm: firebase-tools is not installed and the Storage rows will be skipped"
  fi
fi
jar="$cache/emulators/cloud-storage-rules-runtime-v1.1.3.jar"
if [ ! -e "$jar" ] || [ "$here/RulesStandIn.java" -nt "$jar" ]; then
  if command -v javac >/dev/null && command -v jar >/dev/null; then
    classes=$(mktemp -d)
    javac -d "$classes" "$here/RulesStandIn.java" && jar cfe "$jar" RulesStandIn -C "$classes" .
    rm -rf "$classes"
  else
    echo "bench-peers: no JDK (javac, jar): the rules runtime stand-in is not built and the Storage rows will be skipped"
  fi
fi
exit 0
