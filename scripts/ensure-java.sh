#!/usr/bin/env bash
# `ol2purview spark` and its tests run a local Spark, which needs Java 17 or newer. Install Debian's headless
# OpenJDK 17 when no `java` is found and we may (root or CI).
set -euo pipefail
if command -v java >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update -qq >/dev/null
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
else
  echo "java is not installed and cannot be installed here; Spark tests will be skipped" >&2
fi
