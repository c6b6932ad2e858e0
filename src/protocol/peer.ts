/**
 * What to say when the peer is not a ZooKeeper server: its first bytes, shown as a user would
 * recognise them ("HTTP/1.1 400 Bad Request", or hex when they are not text).
 */
import { formatHost, type HostAddress } from './hosts';
import { ProtocolError } from './ProtocolError';

/** How many bytes are shown as hex when the first reply is not text. */
const HEX_BYTES = 16;

/**
 * The first line of `bytes` in quotes when it reads as text (printable ASCII, 4 characters at
 * least), else the first bytes in hex; '…' marks bytes left out.
 */
export function describeFirstBytes(bytes: Buffer): string {
  const lineEnd = bytes.findIndex((b) => b === 0x0a || b === 0x0d);
  const line = lineEnd < 0 ? bytes : bytes.subarray(0, lineEnd);
  const isText = line.length >= 4 && line.every((b) => b >= 0x20 && b <= 0x7e);
  if (isText) return `"${line.toString('latin1')}${line.length < bytes.length ? '…' : ''}"`;
  const shown = bytes.subarray(0, HEX_BYTES);
  return `<${shown.toString('hex').replace(/(..)(?!$)/g, '$1 ')}${shown.length < bytes.length ? ' …' : ''}>`;
}

/**
 * The error for a first reply that cannot be ZooKeeper's answer to the handshake; `how` says what
 * was wrong with it. It names the peer, shows what it sent, and suggests the likely mistake.
 */
export function notZooKeeper(host: HostAddress, firstBytes: Buffer, how: string): ProtocolError {
  return new ProtocolError(
    'notZooKeeper',
    `${formatHost(host)} is not a ZooKeeper server (another service on that port?): its first reply, ${describeFirstBytes(firstBytes)}, ${how}`,
  );
}
