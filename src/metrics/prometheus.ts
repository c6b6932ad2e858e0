/**
 * An exporter of zk-recipes' metrics to prom-client. prom-client is an optional peer: this module
 * never imports it, you pass it in, so zk-recipes does not depend on it.
 *
 * @example
 * ```ts
 * import * as prom from 'prom-client';
 * import { exportPrometheusMetrics } from 'zk-recipes';
 * const stop = exportPrometheusMetrics(prom);          // into prom.register
 * // GET /metrics: res.end(await prom.register.metrics());
 * ```
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { METRICS_CHANNELS, type LeadershipEvent, type LockHoldEvent, type LockWaitEvent, type OperationEvent, type QueueEvent, type StateEvent } from './channels';

/** The part of a prom-client metric the exporter uses. */
export interface PromMetricLike {
  labels(...values: string[]): { observe?(v: number): void; inc?(v?: number): void; set?(v: number): void };
}

/**
 * The parts of prom-client the exporter uses. (The constructors take `never` so that prom-client's
 * own, generic, signatures fit; the exporter passes them their usual configuration.)
 */
export interface PromClientLike {
  Histogram: new (config: never) => PromMetricLike;
  Counter: new (config: never) => PromMetricLike;
  Gauge: new (config: never) => PromMetricLike;
  register: unknown;
}

interface MetricConfig {
  name: string;
  help: string;
  labelNames: string[];
  registers: unknown[];
  buckets?: number[];
}

export interface PrometheusExportOptions {
  /** The registry to register the metrics in; prom-client's default registry when omitted. */
  registry?: unknown;
  /** Prefix of every metric name. Default 'zk_recipes_'. */
  prefix?: string;
}

/** Seconds: from 1 ms to about a minute. */
const BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Registers zk-recipes' metrics in a prom-client registry and fills them from the
 * diagnostics channels. Returns a function that stops filling them.
 *
 * Metrics (with the default prefix): `zk_recipes_operation_seconds{operation,code}`,
 * `zk_recipes_state_changes_total{state}`, `zk_recipes_lock_wait_seconds{recipe,path,outcome}`,
 * `zk_recipes_lock_hold_seconds{recipe,path,outcome}`, `zk_recipes_leader{recipe,path,id}` (1 while
 * leading), `zk_recipes_leadership_changes_total{recipe,path,event}`,
 * `zk_recipes_queue_items_total{path,event}`. Lock and queue paths are labels: keep their number
 * bounded.
 */
export function exportPrometheusMetrics(prom: PromClientLike, options: PrometheusExportOptions = {}): () => void {
  const prefix = options.prefix ?? 'zk_recipes_';
  const registers = [options.registry ?? prom.register];
  const config = (name: string, help: string, labelNames: string[], buckets?: number[]) => ({ name: prefix + name, help, labelNames, registers, buckets }) as MetricConfig as never;
  const histogram = (name: string, help: string, labelNames: string[]) => new prom.Histogram(config(name, help, labelNames, BUCKETS));
  const counter = (name: string, help: string, labelNames: string[]) => new prom.Counter(config(name, help, labelNames));
  const operations = histogram('operation_seconds', 'ZooKeeper operations, retries included', ['operation', 'code']);
  const states = counter('state_changes_total', 'Connection state changes', ['state']);
  const waits = histogram('lock_wait_seconds', 'Waits for a lock', ['recipe', 'path', 'outcome']);
  const holds = histogram('lock_hold_seconds', 'Holds of a lock', ['recipe', 'path', 'outcome']);
  const leader = new prom.Gauge(config('leader', '1 while this participant leads', ['recipe', 'path', 'id']));
  const leaderships = counter('leadership_changes_total', 'Leadership gained and lost', ['recipe', 'path', 'event']);
  const items = counter('queue_items_total', 'Queue items put, delivered and requeued', ['path', 'event']);

  const handlers: Array<[string, (message: unknown) => void]> = [
    [METRICS_CHANNELS.operation, (m) => {
      const e = m as OperationEvent;
      operations.labels(e.operation, e.code ?? 'OK').observe?.(e.durationMs / 1000);
    }],
    [METRICS_CHANNELS.state, (m) => states.labels((m as StateEvent).state).inc?.()],
    [METRICS_CHANNELS.lockWait, (m) => {
      const e = m as LockWaitEvent;
      waits.labels(e.recipe, e.path, e.outcome).observe?.(e.waitMs / 1000);
    }],
    [METRICS_CHANNELS.lockHold, (m) => {
      const e = m as LockHoldEvent;
      holds.labels(e.recipe, e.path, e.outcome).observe?.(e.holdMs / 1000);
    }],
    [METRICS_CHANNELS.leadership, (m) => {
      const e = m as LeadershipEvent;
      leader.labels(e.recipe, e.path, e.id).set?.(e.event === 'gained' ? 1 : 0);
      leaderships.labels(e.recipe, e.path, e.event).inc?.();
    }],
    [METRICS_CHANNELS.queue, (m) => {
      const e = m as QueueEvent;
      items.labels(e.path, e.event).inc?.(e.items);
    }],
  ];
  for (const [name, handler] of handlers) subscribe(name, handler);
  return () => {
    for (const [name, handler] of handlers) unsubscribe(name, handler);
  };
}
