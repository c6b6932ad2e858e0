/** Metrics and tracing events on node:diagnostics_channel, and an exporter to prom-client. */
export {
  METRICS_CHANNELS,
  type OperationEvent,
  type StateEvent,
  type LockRecipe,
  type LockWaitEvent,
  type LockHoldEvent,
  type LeadershipEvent,
  type QueueEvent,
} from './channels';
export { exportPrometheusMetrics, type PromClientLike, type PromMetricLike, type PrometheusExportOptions } from './prometheus';
