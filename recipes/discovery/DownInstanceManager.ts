import { describeValue, InvalidArgumentError, validateOptions, validatePositiveInt } from '../../src/recipeKit';
import type { ServiceInstance } from './ServiceInstance';

/**
 * When a provider takes an instance out of its list (Curator's DownInstancePolicy): once
 * `noteError` has counted `errorThreshold` errors for it, it is down until `timeoutMs` after the
 * first of them. Defaults in `DOWN_INSTANCE_POLICY_DEFAULTS`.
 */
export interface DownInstancePolicy {
  /** How long an instance stays down, counted from its first error noted. Default 30 s. */
  timeoutMs?: number;
  /** How many errors make an instance down. Default 2. */
  errorThreshold?: number;
}

/** Curator's defaults: down for 30 s after 2 errors. Frozen. */
export const DOWN_INSTANCE_POLICY_DEFAULTS = Object.freeze({ timeoutMs: 30_000, errorThreshold: 2 });

interface Status {
  readonly sinceMs: number;
  errors: number;
}

/**
 * The errors noted against a service's instances, by id, each forgotten `timeoutMs` after its
 * first error; memory is bounded by the instances noted within that time. (Curator purges at
 * most every half timeout, so its instances may stay down up to half as long again; ours come
 * back on time.)
 */
export class DownInstanceManager {
  private readonly timeoutMs: number;
  private readonly errorThreshold: number;
  private readonly now: () => number;
  private readonly statuses = new Map<string, Status>();

  /** @throws InvalidArgumentError for a bad policy. */
  constructor(policy: DownInstancePolicy | undefined, now: () => number) {
    const o = validateOptions(policy, 'downInstancePolicy');
    this.timeoutMs = o.timeoutMs === undefined ? DOWN_INSTANCE_POLICY_DEFAULTS.timeoutMs : validateDuration(o.timeoutMs);
    this.errorThreshold = o.errorThreshold === undefined ? DOWN_INSTANCE_POLICY_DEFAULTS.errorThreshold : validatePositiveInt(o.errorThreshold, 'downInstancePolicy.errorThreshold');
    this.now = now;
  }

  /** Counts an error against the instance. */
  noteError(instance: ServiceInstance<unknown>): void {
    this.purge();
    const status = this.statuses.get(instance.id);
    if (status) status.errors++;
    else this.statuses.set(instance.id, { sinceMs: this.now(), errors: 1 });
  }

  /** Whether the instance may be used: not down. */
  isUp(instance: ServiceInstance<unknown>): boolean {
    this.purge();
    const status = this.statuses.get(instance.id);
    return status === undefined || status.errors < this.errorThreshold;
  }

  private purge(): void {
    if (this.statuses.size === 0) return;
    const now = this.now();
    for (const [id, status] of this.statuses) {
      if (now - status.sinceMs >= this.timeoutMs) this.statuses.delete(id);
    }
  }
}

function validateDuration(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`downInstancePolicy.timeoutMs must be a non-negative finite number, got ${describeValue(value)}`);
  }
  return value;
}
