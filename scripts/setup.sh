#!/usr/bin/env bash
# Sets up a fresh Debian machine for zk-recipes development: what is missing from Debian's packages,
# then the npm dependencies. The package itself needs no compiler; this also builds the optional
# native ZooKeeper client, which the native test pass and the benchmark use. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=()
if [ -z "${ZOOKEEPER_HOME:-}" ] && [ -z "${ZOOKEEPER_CLASSPATH:-}" ] && [ ! -f /usr/share/java/zookeeper.jar ]; then
  packages+=(zookeeper)
fi
command -v java >/dev/null 2>&1 || packages+=(default-jre-headless)
command -v bash >/dev/null 2>&1 || packages+=(bash)
# Peers for interop tests and benchmarks: Curator's jars (recipes and service discovery) and kazoo.
[ -f /usr/share/java/curator-recipes.jar ] || packages+=(libcurator-recipes-java libcurator-framework-java libcurator-client-java)
[ -f /usr/share/java/curator-x-discovery.jar ] || packages+=(libcurator-discovery-java)
/usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1 || packages+=(python3-kazoo)
command -v javac >/dev/null 2>&1 || packages+=(default-jdk-headless)
# The benchmark's outside reference: a Redis lock.
command -v redis-server >/dev/null 2>&1 || packages+=(redis-server)

if [ "${#packages[@]}" -gt 0 ]; then
  echo "setup: installing ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${packages[@]}" >/dev/null
fi

# node-gyp compiles the zookeeper binding against Node's own headers when the machine has them.
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then
  export npm_config_nodedir=/usr
fi
npm ci --no-audit --no-fund
# npm can skip install scripts, and skips optional dependencies that fail to build; prove the native
# client was really built (the native test pass needs it).
node -e "require('zookeeper')" || { echo "setup: the optional zookeeper native binding did not build (the native test pass needs it)" >&2; exit 1; }
echo "setup: ready"
