/** The tree of the `cache` scenario, shared by the scenario and its writer process. */

/** Writes in flight at once. */
export const WRITE_WINDOW = 500;

/** The tree's paths under `root`, parents first: about √N parents and their children, N in all. */
export function treePaths(root: string, nodes: number): string[] {
  const parents = Math.max(1, Math.round(Math.sqrt(nodes)));
  const paths: string[] = [];
  for (let p = 0; p < parents && paths.length < nodes; p++) {
    paths.push(`${root}/p${p}`);
    for (let c = 0; c < Math.ceil(nodes / parents) - 1 && paths.length < nodes; c++) paths.push(`${root}/p${p}/c${c}`);
  }
  return paths;
}

/** Runs `work` over `items` in order, `WRITE_WINDOW` at a time. */
export async function windowed<T>(items: readonly T[], work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(WRITE_WINDOW, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}
