// /metrics under `serve --workers N`: a scrape reaches one worker, so that worker asks the
// primary, which gathers every worker's registry through prom-client's AggregatorRegistry.
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const MESSAGE = 'vouch:cluster-metrics';

interface MetricsMessage {
  type: typeof MESSAGE;
  id: number;
  text?: string;
}

const isMetricsMessage = (m: unknown): m is MetricsMessage =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === MESSAGE;

/** Primary: answers workers' requests for the whole cluster's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMetricsMessage(message)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: MESSAGE, id: message.id, text }),
      () => worker.send({ type: MESSAGE, id: message.id }),
    );
  });
}

/** Worker: offers this registry to the primary's aggregation. */
export function shareWorkerMetrics(registry: Registry): void {
  if (!cluster.isWorker) return;
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

let nextId = 0;

/** Worker: the cluster's metrics, or undefined (not a worker, or no answer in time). */
export function clusterMetrics(timeoutMs = 3000): Promise<string | undefined> {
  if (!cluster.isWorker || !process.send) return Promise.resolve(undefined);
  const id = ++nextId;
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (!isMetricsMessage(message) || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve(message.text);
    };
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      resolve(undefined);
    }, timeoutMs);
    process.on('message', onMessage);
    process.send!({ type: MESSAGE, id });
  });
}
