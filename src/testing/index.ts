/** The testing harness: real ZooKeeper servers and faults for tests, like Curator's curator-test. */
export { TestingServer, type TestingServerOptions, type QuorumMembership } from './TestingServer';
export { TestingCluster, type TestingClusterOptions, type IsolationMode } from './TestingCluster';
export { PeerLink } from './peerLinks';
export { FaultProxy, type FaultMode, type FaultProxyOptions, type ChunkDirection, type ChunkVerdict, type ChunkInterceptor } from './FaultProxy';
export { expireSession, type ExpireSessionOptions, type SessionCredentials, type HasSessionCredentials } from './expireSession';
export { fourLetterWord, parseMntr, parseMode } from './fourLetterWord';
export { locateZooKeeper, HarnessSetupError, type ZooKeeperInstallation } from './installation';
export { freePorts } from './ports';
