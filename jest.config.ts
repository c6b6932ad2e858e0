import type { Config } from 'jest';

// Two projects: `unit` needs no server; `integration` starts real ZooKeeper servers through
// the testing harness. The machine has 2 cores and every integration file starts its own JVMs,
// so workers stay few.
const tsJest: Config['transform'] = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
};

// Files named *.native.test.ts are about the native binding's own behaviour, *.protocol.test.ts
// about the protocol transport's: each runs only in the integration pass on its transport
// (ZK_TEST_TRANSPORT=native or protocol, the default).
const otherTransport = process.env.ZK_TEST_TRANSPORT === 'native' ? ['\\.protocol\\.test\\.ts$'] : ['\\.native\\.test\\.ts$'];

const config: Config = {
  maxWorkers: 2,
  // Integration tests start JVMs and wait on real timeouts; each test bounds its own waits.
  testTimeout: 120_000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: '<rootDir>/test/jestEnvironment.ts',
      transform: tsJest,
      testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/recipes/**/*.test.ts', '<rootDir>/cli/**/*.test.ts', '<rootDir>/chaos/**/*.test.ts', '<rootDir>/demo/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/jestSetup.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: '<rootDir>/test/jestEnvironment.ts',
      transform: tsJest,
      testMatch: ['<rootDir>/integration/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...otherTransport],
      setupFilesAfterEnv: ['<rootDir>/test/jestSetup.ts'],
      slowTestThreshold: 30,
    },
  ],
};

export default config;
