/** Memory readings for the processes that measure memory (run with --expose-gc). */
import { writeHeapSnapshot } from 'node:v8';

/** Full garbage collections per reading. */
const COLLECTIONS = 8;

/**
 * The process's memory after full garbage collections, with a pause after each for finalizers
 * and freed sockets: of the readings taken after each collection, the one with the least heap.
 *
 * An idle process's heap after a full collection moves between collections by up to about
 * 200 kB with nothing running (measured: 32,364–32,616 kB over 12 collections of one idle
 * process), while the live objects (a heap snapshot's) do not. That noise only ever adds, so the
 * least reading is the closest to what is live; one reading made the heap per waiter at 100
 * waiters read 5.2 or 7.2 kB by chance.
 */
export async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  let least: NodeJS.MemoryUsage | undefined;
  for (let i = 0; i < COLLECTIONS; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
    const reading = process.memoryUsage();
    if (least === undefined || reading.heapUsed < least.heapUsed) least = reading;
  }
  return least as NodeJS.MemoryUsage;
}

/** With BENCH_HEAP_SNAPSHOT=<file> in the environment, writes a heap snapshot there: what the reading just taken holds. */
export function snapshotIfAsked(): void {
  const file = process.env.BENCH_HEAP_SNAPSHOT;
  if (file) writeHeapSnapshot(file);
}
