/** Memory readings for the processes that measure memory (run with --expose-gc). */

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
