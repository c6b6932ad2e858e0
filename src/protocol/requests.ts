/**
 * A request on its way through the connection: its frame, how its answer is handled, and why it
 * failed when it got none.
 */
import { LENGTH_BYTES } from './framing';
import { JuteReader, JuteWriter } from './jute';

/** A request's header: the frame's length, the xid (filled in when sent) and the opcode. */
const HEADER_BYTES = LENGTH_BYTES + 8;

/** Why a request did not get its answer: a reply's error code, or the connection's end and its cause. */
export class Failure {
  constructor(
    readonly rc: number,
    readonly cause?: unknown,
  ) {}
}

/** A request on its way: waiting for a connection, or sent and waiting for its reply. */
export interface Request {
  /** Set when sent (the Java client numbers requests as it sends them). */
  xid: number;
  /** Length, header and body; the xid is written in when sent. */
  readonly frame: Buffer;
  /** Handles the reply: its error code and, when 0, a reader on its body. Throws ProtocolError on bad bytes. */
  readonly reply: (err: number, body: JuteReader) => void;
  readonly fail: (failure: Failure) => void;
}

/** Encodes one request: header room, then the body. */
export function frame(opcode: number, xid: number, body?: (w: JuteWriter) => void): Buffer {
  const w = new JuteWriter(HEADER_BYTES);
  body?.(w);
  const bytes = w.bytes();
  bytes.writeInt32BE(bytes.length - LENGTH_BYTES, 0);
  bytes.writeInt32BE(xid, LENGTH_BYTES);
  bytes.writeInt32BE(opcode, LENGTH_BYTES + 4);
  return bytes;
}
