#!/usr/bin/env bash
# Installs what make bench-peers needs outside the repository, in the cache
# folder $1, without downloading any emulator:
#  - firebase-tools $2 from npm;
#  - in $1/emulators (its FIREBASE_EMULATORS_PATH), under the names
#    firebase-tools looks for: a stand-in for the Storage rules runtime
#    (RulesStandIn.java, compiled with the machine's JDK), and the Cloud SDK's
#    Firestore and Pub/Sub emulators (Debian packages): a jar that only names
#    the Cloud SDK's Firestore jar and its main class (firebase-tools runs
#    `java -jar`, and that jar has no Main-Class), and a link to the Cloud
#    SDK's Pub/Sub emulator folder;
#  - $1/suite: the npm packages of the repository's functions fixtures
#    (web/e2e/fixtures/functions's lock, without install scripts), which the
#    whole-suite cold start's codebase (the fixture v1) uses;
#  - $1/emulators-codelab: firebase/emulators-codelab's codelab-final-state
#    with its functions' npm packages (no install scripts), taken from the git
#    directory $EMULATORS_CODELAB_GIT when set, else cloned from GitHub.
# Whatever cannot be installed is said, and bench-peers skips its rows.
set -u
cache=$1 version=$2
here=$(cd "$(dirname "$0")" && pwd)
emulators=$cache/emulators
mkdir -p "$emulators"
npm_install() { # folder, then npm's arguments
  local dir=$1
  shift
  npm "$@" --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
}
installed=$(node -p "require('$cache/node_modules/firebase-tools/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$version" ]; then
  if command -v npm >/dev/null; then
    echo "bench-peers: installing firebase-tools@$version into $cache"
    npm i --prefix "$cache" "firebase-tools@$version" --no-audit --no-fund --loglevel=error >/dev/null ||
      echo "bench-peers: firebase-tools could not be installed: the Storage, whole-suite and codelab rows will be skipped"
  else
    echo "bench-peers: no npm: firebase-tools is not installed and the Storage, whole-suite and codelab rows will be skipped"
  fi
fi
jar="$emulators/cloud-storage-rules-runtime-v1.1.3.jar"
if [ ! -e "$jar" ] || [ "$here/RulesStandIn.java" -nt "$jar" ]; then
  if command -v javac >/dev/null && command -v jar >/dev/null; then
    classes=$(mktemp -d)
    javac -d "$classes" "$here/RulesStandIn.java" && jar cfe "$jar" RulesStandIn -C "$classes" .
    rm -rf "$classes"
  else
    echo "bench-peers: no JDK (javac, jar): the rules runtime stand-in is not built and the Storage rows will be skipped"
  fi
fi

# The Cloud SDK's Firestore and Pub/Sub emulators where firebase-tools
# expects the ones it would download (downloadableEmulatorInfo.json names them).
info=$cache/node_modules/firebase-tools/lib/emulator/downloadableEmulatorInfo.json
firestore_jar=$(dpkg -L google-cloud-cli-firestore-emulator 2>/dev/null | grep '/cloud-firestore-emulator\.jar$' | head -1)
pubsub_bin=$(dpkg -L google-cloud-cli-pubsub-emulator 2>/dev/null | grep '/bin/cloud-pubsub-emulator$' | head -1)
if [ ! -e "$info" ]; then
  : # said above
elif [ -z "$firestore_jar" ] || [ -z "$pubsub_bin" ]; then
  echo "bench-peers: the Cloud SDK's Firestore or Pub/Sub emulator is not installed: the whole-suite and codelab rows will be skipped"
elif ! command -v jar >/dev/null; then
  echo "bench-peers: no JDK (jar): the whole-suite and codelab rows will be skipped"
else
  target="$emulators/$(node -p "require('$info').firestore.downloadPathRelativeToCacheDir")"
  if [ ! -e "$target" ]; then
    manifest=$(mktemp)
    printf 'Main-Class: com.google.cloud.datastore.emulator.firestore.CloudFirestore\nClass-Path: %s\n' "$firestore_jar" >"$manifest"
    jar cfm "$target" "$manifest"
    rm -f "$manifest"
  fi
  # binaryPathRelativeToCacheDir is <version folder>/pubsub-emulator/bin/cloud-pubsub-emulator.
  link="$emulators/$(node -p "require('path').dirname(require('path').dirname(require('$info').pubsub.binaryPathRelativeToCacheDir))")"
  if [ ! -e "$link/bin/cloud-pubsub-emulator" ]; then
    mkdir -p "$(dirname "$link")"
    ln -sfn "$(dirname "$(dirname "$pubsub_bin")")" "$link"
  fi
fi

fixtures=$here/../../web/e2e/fixtures/functions
if [ ! -e "$cache/suite/node_modules/.package-lock.json" ] || [ "$fixtures/package-lock.json" -nt "$cache/suite/node_modules/.package-lock.json" ]; then
  mkdir -p "$cache/suite"
  cp "$fixtures/package.json" "$fixtures/package-lock.json" "$cache/suite/"
  npm_install "$cache/suite" ci --omit=dev ||
    echo "bench-peers: the functions fixtures' packages could not be installed: the whole-suite rows will be skipped"
fi

codelab=$cache/emulators-codelab
if [ ! -e "$codelab/functions/node_modules/.package-lock.json" ]; then
  rm -rf "$codelab" && mkdir -p "$codelab"
  src=${EMULATORS_CODELAB_GIT:-} clone=$(mktemp -d)
  if [ -z "$src" ]; then
    src=$clone/repo.git
    git clone -q --bare --depth 1 https://github.com/firebase/emulators-codelab "$src" 2>/dev/null || src=""
  fi
  if [ -z "$src" ] || ! git --git-dir="$src" archive HEAD:codelab-final-state | tar -x -C "$codelab" ||
    ! npm_install "$codelab/functions" install; then
    rm -rf "$codelab"
    echo "bench-peers: firebase/emulators-codelab could not be had (set EMULATORS_CODELAB_GIT to a git directory of it) or installed: the codelab rows will be skipped"
  fi
  rm -rf "$clone"
fi
exit 0
