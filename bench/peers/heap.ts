/** Memory readings for the processes that measure memory (run with --expose-gc). */
import { writeHeapSnapshot } from 'node:v8';

/** The process's memory after full garbage collections, with a pause between them for finalizers and freed sockets. */
export async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  return process.memoryUsage();
}

/** With BENCH_HEAP_SNAPSHOT=<file> in the environment, writes a heap snapshot there: what the reading just taken holds. */
export function snapshotIfAsked(): void {
  const file = process.env.BENCH_HEAP_SNAPSHOT;
  if (file) writeHeapSnapshot(file);
}
