import { type NodeData, NodeWatch, type Session, type ZkClient } from '../../src/recipeKit';

/**
 * The watch on a contender's own lock node, in its session. A waiter sets it when it starts to wait
 * (beside the read of the node ahead, in the same round trip); the lease's monitor takes it over
 * once the lock is won, so that watching the held node costs nothing more. Whoever holds it now
 * hears of the node: its data, or null once it is gone.
 */
export class OwnNode {
  private listener: (node: NodeData | null) => void = () => undefined;
  readonly watch: NodeWatch;

  constructor(client: ZkClient, node: string, session: Session) {
    this.watch = new NodeWatch(client, node, (value) => this.listener(value), { session, creation: false });
  }

  /** Whether the node is known to be gone (or the watch ended with its session). */
  get gone(): boolean {
    return this.watch.value === null || this.watch.isClosed;
  }

  /** Hears of the node from now on; told at once of what is known. */
  listen(listener: (node: NodeData | null) => void): void {
    this.listener = listener;
    const known = this.watch.value;
    if (known !== undefined) listener(known);
    else if (this.watch.isClosed) listener(null);
  }
}
