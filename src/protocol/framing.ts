/**
 * Framing: every message, both ways, is a 4-byte big-endian length followed by that many bytes.
 */
import { ProtocolError } from './ProtocolError';

/**
 * The largest frame the client accepts by default: the Java client's jute.maxbuffer default
 * (0xfffff bytes, 1 MiB less one byte), so the two give up on the same replies.
 */
export const DEFAULT_MAX_FRAME_BYTES = 0xfffff;

/** Bytes of the length prefix. */
export const LENGTH_BYTES = 4;

/**
 * Cuts a byte stream into frames. Bytes come in chunks of any size; each complete frame's body is
 * handed on as soon as it is there, without a copy when it sits in one chunk. A length over the
 * limit or below zero throws a ProtocolError before anything is buffered for it.
 */
export class FrameDecoder {
  /** The bytes of a frame not yet complete; none (most of the time) when undefined. */
  private chunks: Buffer[] | undefined;
  private buffered = 0;

  constructor(readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Bytes held of a frame not yet complete. */
  get pending(): number {
    return this.buffered;
  }

  private checkLength(length: number): void {
    if (length < 0) throw new ProtocolError('malformed', `a frame announces a negative length ${length}`);
    if (length > this.maxFrameBytes) {
      throw new ProtocolError('frameTooLarge', `a frame of ${length} bytes is over the limit of ${this.maxFrameBytes} bytes (maxFrameBytes, jute.maxbuffer)`);
    }
  }

  /**
   * Feeds a chunk; calls `onFrame` with each complete frame body, in order. Throws ProtocolError
   * on a bad length; the stream cannot be trusted after that.
   */
  push(chunk: Buffer, onFrame: (body: Buffer) => void): void {
    let bytes = chunk;
    if (this.buffered > 0) {
      const chunks = this.chunks as Buffer[];
      chunks.push(chunk);
      this.buffered += chunk.length;
      if (this.buffered < LENGTH_BYTES) return;
      const head = chunks[0].length >= LENGTH_BYTES ? chunks[0] : Buffer.concat(chunks, LENGTH_BYTES);
      const length = head.readInt32BE(0);
      this.checkLength(length);
      // Join the chunks only once the whole frame is there, so a large frame is copied once.
      if (this.buffered < LENGTH_BYTES + length) return;
      bytes = Buffer.concat(chunks, this.buffered);
      this.chunks = undefined;
      this.buffered = 0;
    }
    let at = 0;
    while (bytes.length - at >= LENGTH_BYTES) {
      const length = bytes.readInt32BE(at);
      this.checkLength(length);
      if (bytes.length - at - LENGTH_BYTES < length) break;
      onFrame(bytes.subarray(at + LENGTH_BYTES, at + LENGTH_BYTES + length));
      at += LENGTH_BYTES + length;
    }
    if (at < bytes.length) {
      this.chunks = [at === 0 ? bytes : bytes.subarray(at)];
      this.buffered = bytes.length - at;
    }
  }

  /** The stream ended. Throws a ProtocolError ('truncated') when it ended inside a frame. */
  end(): void {
    const held = this.buffered;
    this.chunks = undefined;
    this.buffered = 0;
    if (held > 0) throw new ProtocolError('truncated', `the connection ended inside a frame (${held} bytes of it received)`);
  }
}
