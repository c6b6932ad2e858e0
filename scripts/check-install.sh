#!/usr/bin/env bash
# Installs zk-recipes as a consumer would, and uses it: `npm pack`, then the tarball into a fresh
# project with install scripts blocked (so the optional native binding is not built), then
# `require` and `import` of the package and of zk-recipes/testing, a mutex acquired and released
# against a TestingServer, and the native transport refused with an error that says how to build
# it. The tarball's own dependencies come from the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d "${TMPDIR:-/tmp}/zk-recipes-install-XXXXXX")"
trap 'rm -rf "$work"' EXIT

npm run build --silent
tarball="$(npm pack --silent --pack-destination "$work" | tail -n 1)"
echo "check-install: packed $tarball"

mkdir "$work/consumer"
cd "$work/consumer"
npm init -y >/dev/null
npm install --ignore-scripts --no-audit --no-fund "$work/$tarball" >/dev/null
echo "check-install: installed with --ignore-scripts"

cat > check.cjs <<'EOF'
const assert = require('node:assert');
const { ZkClient, InterProcessMutex, UnsupportedError } = require('zk-recipes');
const { TestingServer } = require('zk-recipes/testing');

(async () => {
  const server = await TestingServer.start({ forceSync: false });
  const client = new ZkClient({ connectString: server.connectString });
  try {
    client.start();
    await client.blockUntilConnected({ timeoutMs: 30000 });
    const mutex = new InterProcessMutex(client, '/locks/check');
    const lease = await mutex.acquire({ timeoutMs: 10000 });
    assert.strictEqual(typeof lease.fencingToken, 'bigint');
    await lease.release();
    console.log('check-install: require works; a mutex was acquired and released (token %s)', lease.fencingToken);
  } finally {
    await client.close();
    await server.close();
  }
  // Nothing loaded the binding.
  assert.deepStrictEqual(Object.keys(require.cache).filter((file) => /node_modules[\\/]zookeeper[\\/]/.test(file)), []);
  // It was not built (install scripts were blocked): choosing it says how to fix that.
  assert.throws(
    () => new ZkClient({ connectString: '127.0.0.1:2181', transport: 'native' }),
    (err) => err instanceof UnsupportedError && /npm rebuild zookeeper/.test(err.message),
  );
  console.log('check-install: the native transport, unbuilt, is refused with how to build it');
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
EOF

cat > check.mjs <<'EOF'
import assert from 'node:assert';
import { ZkClient, InterProcessMutex } from 'zk-recipes';
import { TestingServer } from 'zk-recipes/testing';

const server = await TestingServer.start({ forceSync: false });
const client = new ZkClient({ connectString: server.connectString });
try {
  client.start();
  await client.blockUntilConnected({ timeoutMs: 30000 });
  await new InterProcessMutex(client, '/locks/check').runExclusive(async () => undefined, { timeoutMs: 10000 });
  console.log('check-install: import works; a mutex was acquired and released');
} finally {
  await client.close();
  await server.close();
}
EOF

node check.cjs
node check.mjs
echo "check-install: ok"
