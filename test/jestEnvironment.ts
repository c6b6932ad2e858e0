/**
 * The test environment of both jest projects: Node's, plus one thing in the jest worker's own realm.
 *
 * A jest worker sends each file's results to the parent process with `JSON.stringify`, which throws
 * on a BigInt. A failed `expect(t.sessionId).toBe(session)` carries two BigInts, so the file's whole
 * report was lost and jest printed only "Test suite failed to run: Do not know how to serialize a
 * BigInt" (jestjs/jest#11617). Giving BigInt a `toJSON` here lets the report through with the failure
 * in it. This module runs in the worker's realm, not in the tests' one, so the code under test still
 * sees `JSON.stringify` refuse a BigInt, as it would in production.
 */
import NodeEnvironment from 'jest-environment-node';

const proto = BigInt.prototype as unknown as { toJSON?: () => string };
proto.toJSON ??= function (this: bigint) {
  return `${this.toString()}n`;
};

export default NodeEnvironment;
