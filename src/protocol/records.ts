/**
 * The records of ZooKeeper's client protocol (zookeeper.jute), as plain data with their schemas.
 * Field order and types are the wire's; where zk-recipes' own types name a field differently
 * (ACL's `id` record, ClientInfo), the record is flattened or renamed to them, which changes no
 * byte: jute records carry no framing.
 */
import type { ACL, ClientIdentity, Stat } from '../transport/Transport';
import { record, type Schema } from './jute';

export const StatRecord: Schema<Stat> = record<Stat>('Stat', [
  ['czxid', 'long'],
  ['mzxid', 'long'],
  ['ctime', 'time'],
  ['mtime', 'time'],
  ['version', 'int'],
  ['cversion', 'int'],
  ['aversion', 'int'],
  ['ephemeralOwner', 'long'],
  ['dataLength', 'int'],
  ['numChildren', 'int'],
  ['pzxid', 'long'],
]);

/** ACL { int perms; Id { ustring scheme; ustring id } }, with the Id flattened. */
export const ACLRecord: Schema<ACL> = record<ACL>('ACL', [
  ['perms', 'int'],
  ['scheme', 'string'],
  ['id', 'string'],
]);

/** ClientInfo { ustring authScheme; ustring user }, named as zk-recipes' ClientIdentity. */
export const ClientInfoRecord: Schema<ClientIdentity> = record<ClientIdentity>('ClientInfo', [
  ['scheme', 'string'],
  ['id', 'string'],
]);

export interface ConnectRequest {
  protocolVersion: number;
  lastZxidSeen: bigint;
  timeOut: number;
  sessionId: bigint;
  passwd: Buffer;
  readOnly: boolean;
}
export const ConnectRequestRecord = record<ConnectRequest>('ConnectRequest', [
  ['protocolVersion', 'int'],
  ['lastZxidSeen', 'long'],
  ['timeOut', 'int'],
  ['sessionId', 'long'],
  ['passwd', 'buffer'],
  ['readOnly', 'bool'],
]);

export interface ConnectResponse {
  protocolVersion: number;
  timeOut: number;
  sessionId: bigint;
  passwd: Buffer;
  /** Absent from servers before 3.4; read as false then. */
  readOnly: boolean;
}
export const ConnectResponseRecord = record<ConnectResponse>('ConnectResponse', [
  ['protocolVersion', 'int'],
  ['timeOut', 'int'],
  ['sessionId', 'long'],
  ['passwd', 'buffer'],
  ['readOnly', 'trailingBool'],
]);

export interface RequestHeader {
  xid: number;
  type: number;
}
export const RequestHeaderRecord = record<RequestHeader>('RequestHeader', [
  ['xid', 'int'],
  ['type', 'int'],
]);

export interface ReplyHeader {
  xid: number;
  zxid: bigint;
  err: number;
}
export const ReplyHeaderRecord = record<ReplyHeader>('ReplyHeader', [
  ['xid', 'int'],
  ['zxid', 'long'],
  ['err', 'int'],
]);

export interface MultiHeader {
  type: number;
  done: boolean;
  err: number;
}
export const MultiHeaderRecord = record<MultiHeader>('MultiHeader', [
  ['type', 'int'],
  ['done', 'bool'],
  ['err', 'int'],
]);

export interface AuthPacket {
  type: number;
  scheme: string;
  auth: Buffer;
}
export const AuthPacketRecord = record<AuthPacket>('AuthPacket', [
  ['type', 'int'],
  ['scheme', 'string'],
  ['auth', 'buffer'],
]);

export interface WatcherEvent {
  type: number;
  state: number;
  path: string;
}
export const WatcherEventRecord = record<WatcherEvent>('WatcherEvent', [
  ['type', 'int'],
  ['state', 'int'],
  ['path', 'string'],
]);

export interface SetWatches {
  relativeZxid: bigint;
  dataWatches: string[];
  existWatches: string[];
  childWatches: string[];
}
export const SetWatchesRecord = record<SetWatches>('SetWatches', [
  ['relativeZxid', 'long'],
  ['dataWatches', { vector: 'string' }],
  ['existWatches', { vector: 'string' }],
  ['childWatches', { vector: 'string' }],
]);

export interface SetWatches2 extends SetWatches {
  persistentWatches: string[];
  persistentRecursiveWatches: string[];
}
export const SetWatches2Record = record<SetWatches2>('SetWatches2', [
  ['relativeZxid', 'long'],
  ['dataWatches', { vector: 'string' }],
  ['existWatches', { vector: 'string' }],
  ['childWatches', { vector: 'string' }],
  ['persistentWatches', { vector: 'string' }],
  ['persistentRecursiveWatches', { vector: 'string' }],
]);

export interface PathRequest {
  path: string;
}
/** SyncRequest, GetACLRequest, GetAllChildrenNumberRequest, GetEphemeralsRequest (prefixPath): one path. */
export const PathRecord = record<PathRequest>('PathRequest', [['path', 'string']]);

export interface PathWatchRequest {
  path: string;
  watch: boolean;
}
/** ExistsRequest, GetDataRequest, GetChildrenRequest, GetChildren2Request: a path and a watch flag. */
export const PathWatchRecord = record<PathWatchRequest>('PathWatchRequest', [
  ['path', 'string'],
  ['watch', 'bool'],
]);

export interface PathVersionRequest {
  path: string;
  version: number;
}
/** DeleteRequest, CheckVersionRequest. */
export const PathVersionRecord = record<PathVersionRequest>('PathVersionRequest', [
  ['path', 'string'],
  ['version', 'int'],
]);

export interface PathTypeRequest {
  path: string;
  type: number;
}
/** CheckWatchesRequest, RemoveWatchesRequest (type), AddWatchRequest (mode). */
export const PathTypeRecord = record<PathTypeRequest>('PathTypeRequest', [
  ['path', 'string'],
  ['type', 'int'],
]);

export interface CreateRequest {
  path: string;
  data: Buffer;
  acl: readonly ACL[];
  flags: number;
}
export const CreateRequestRecord = record<CreateRequest>('CreateRequest', [
  ['path', 'string'],
  ['data', 'buffer'],
  ['acl', { vector: ACLRecord }],
  ['flags', 'int'],
]);

export interface CreateTTLRequest extends CreateRequest {
  ttl: bigint;
}
export const CreateTTLRequestRecord = record<CreateTTLRequest>('CreateTTLRequest', [
  ['path', 'string'],
  ['data', 'buffer'],
  ['acl', { vector: ACLRecord }],
  ['flags', 'int'],
  ['ttl', 'long'],
]);

export interface SetDataRequest {
  path: string;
  data: Buffer;
  version: number;
}
export const SetDataRequestRecord = record<SetDataRequest>('SetDataRequest', [
  ['path', 'string'],
  ['data', 'buffer'],
  ['version', 'int'],
]);

export interface SetACLRequest {
  path: string;
  acl: readonly ACL[];
  version: number;
}
export const SetACLRequestRecord = record<SetACLRequest>('SetACLRequest', [
  ['path', 'string'],
  ['acl', { vector: ACLRecord }],
  ['version', 'int'],
]);

export interface PathResponse {
  path: string;
}
/** CreateResponse, SyncResponse. */
export const PathResponseRecord = record<PathResponse>('PathResponse', [['path', 'string']]);

export interface Create2Response {
  path: string;
  stat: Stat;
}
export const Create2ResponseRecord = record<Create2Response>('Create2Response', [
  ['path', 'string'],
  ['stat', StatRecord],
]);

export interface StatResponse {
  stat: Stat;
}
/** ExistsResponse, SetDataResponse, SetACLResponse. */
export const StatResponseRecord = record<StatResponse>('StatResponse', [['stat', StatRecord]]);

export interface GetDataResponse {
  data: Buffer;
  stat: Stat;
}
export const GetDataResponseRecord = record<GetDataResponse>('GetDataResponse', [
  ['data', 'buffer'],
  ['stat', StatRecord],
]);

export interface GetChildrenResponse {
  children: string[];
}
export const GetChildrenResponseRecord = record<GetChildrenResponse>('GetChildrenResponse', [['children', { vector: 'string' }]]);

export interface GetChildren2Response {
  children: string[];
  stat: Stat;
}
export const GetChildren2ResponseRecord = record<GetChildren2Response>('GetChildren2Response', [
  ['children', { vector: 'string' }],
  ['stat', StatRecord],
]);

export interface GetACLResponse {
  acl: ACL[];
  stat: Stat;
}
export const GetACLResponseRecord = record<GetACLResponse>('GetACLResponse', [
  ['acl', { vector: ACLRecord }],
  ['stat', StatRecord],
]);

export interface GetEphemeralsResponse {
  ephemerals: string[];
}
export const GetEphemeralsResponseRecord = record<GetEphemeralsResponse>('GetEphemeralsResponse', [['ephemerals', { vector: 'string' }]]);

export interface GetAllChildrenNumberResponse {
  totalNumber: number;
}
export const GetAllChildrenNumberResponseRecord = record<GetAllChildrenNumberResponse>('GetAllChildrenNumberResponse', [['totalNumber', 'int']]);

export interface WhoAmIResponse {
  clientInfo: ClientIdentity[];
}
export const WhoAmIResponseRecord = record<WhoAmIResponse>('WhoAmIResponse', [['clientInfo', { vector: ClientInfoRecord }]]);

export interface ErrorResponse {
  err: number;
}
/** ErrorResponse: a multi's failed operation, and addWatch's reply. */
export const ErrorResponseRecord = record<ErrorResponse>('ErrorResponse', [['err', 'int']]);

/** Every record, for tests that go through them all. */
export const ALL_RECORDS: ReadonlyArray<Schema<unknown>> = [
  StatRecord,
  ACLRecord,
  ClientInfoRecord,
  ConnectRequestRecord,
  ConnectResponseRecord,
  RequestHeaderRecord,
  ReplyHeaderRecord,
  MultiHeaderRecord,
  AuthPacketRecord,
  WatcherEventRecord,
  SetWatchesRecord,
  SetWatches2Record,
  PathRecord,
  PathWatchRecord,
  PathVersionRecord,
  PathTypeRecord,
  CreateRequestRecord,
  CreateTTLRequestRecord,
  SetDataRequestRecord,
  SetACLRequestRecord,
  PathResponseRecord,
  Create2ResponseRecord,
  StatResponseRecord,
  GetDataResponseRecord,
  GetChildrenResponseRecord,
  GetChildren2ResponseRecord,
  GetACLResponseRecord,
  GetEphemeralsResponseRecord,
  GetAllChildrenNumberResponseRecord,
  WhoAmIResponseRecord,
  ErrorResponseRecord,
] as ReadonlyArray<Schema<unknown>>;
