/** A session's id and password, and where its servers are: what it takes to attach to the session from elsewhere. */
export interface SessionCredentials {
  readonly connectString: string;
  readonly sessionId: bigint;
  /** 16 bytes as 32 hex digits. */
  readonly sessionPassword: string;
}

/** Anything that can say which session it holds, such as a ZkClient. */
export interface HasSessionCredentials {
  getSessionCredentials(): SessionCredentials;
}
