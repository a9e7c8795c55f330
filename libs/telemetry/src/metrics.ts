import { collectDefaultMetrics, register, type MetricValue, type MetricValueWithName } from 'prom-client';

/**
 * Prometheus metrics that cost next to nothing on the hot path.
 *
 * prom-client's own counters and histograms hash their label values into a string on every `inc`/`observe`,
 * even through a child made with `labels()` (measured here: ~0.6 µs per counter inc, ~1.1 µs per histogram
 * observe, each with allocations). These keep one child object per label combination, made once and held by
 * the caller, whose `inc`/`observe` only add to numbers; the labels are turned into text only when Prometheus
 * scrapes. They are registered in prom-client's default registry, beside `collectDefaultMetrics`, so one
 * `/metrics` answer has them all. Every metric of a process lives in that one registry: in the one-process
 * launcher all apps share it and it is served once.
 */

type Labels = Record<string, string | number>;

/** What prom-client's registry reads from a metric at scrape time. */
interface Scraped {
  name: string;
  help: string;
  type: string;
  values: MetricValue<string>[];
  aggregator: 'sum';
}

/** A counter for one combination of label values. */
export interface CounterChild {
  inc(by?: number): void;
}

/** A histogram for one combination of label values. */
export interface HistogramChild {
  /** Adds one observation (seconds, for latencies). */
  observe(value: number): void;
}

/** What a metric family needs to be registered in prom-client's registry and scraped. */
abstract class Family<C> {
  private readonly children = new Map<string, { labels: Labels; child: C }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    const existing = register.getSingleMetric(name);
    // One definition per process: a second with the same name is a programming error, not a second app.
    if (existing) throw new Error(`metric ${name} is defined twice`);
    register.registerMetric(this as never);
  }

  abstract readonly type: 'counter' | 'histogram' | 'gauge';
  protected abstract create(): C;
  protected abstract valuesOf(child: C, labels: Labels, out: MetricValue<string>[]): void;
  protected abstract clear(child: C): void;

  /**
   * The child for these label values (in `labelNames` order), made on first use. Callers keep it: this
   * lookup builds a key, the child's own methods do not allocate.
   */
  child(...values: (string | number)[]): C {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name} takes ${this.labelNames.length} label values`);
    const key = values.join('\u0000');
    let entry = this.children.get(key);
    if (!entry) {
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i]));
      entry = { labels, child: this.create() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  /** Called by the registry when Prometheus scrapes. */
  async get(): Promise<Scraped> {
    const values: MetricValue<string>[] = [];
    for (const { labels, child } of this.children.values()) this.valuesOf(child, labels, values);
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }

  /** prom-client's registry.resetMetrics(). */
  reset(): void {
    for (const { child } of this.children.values()) this.clear(child);
  }
}

class CounterCell implements CounterChild {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

/** A monotonically increasing count (name it `..._total`). */
export class Counter extends Family<CounterChild> {
  readonly type = 'counter';
  protected create(): CounterChild {
    return new CounterCell();
  }
  protected valuesOf(child: CounterChild, labels: Labels, out: MetricValue<string>[]): void {
    out.push({ labels, value: (child as CounterCell).value });
  }
  protected clear(child: CounterChild): void {
    (child as CounterCell).value = 0;
  }
}

class HistogramCell implements HistogramChild {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

/** Latency buckets in seconds: 1 ms to 10 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** A distribution of observations in cumulative buckets, with their sum and count (Prometheus histogram). */
export class Histogram extends Family<HistogramChild> {
  readonly type = 'histogram';
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[] = LATENCY_BUCKETS,
  ) {
    super(name, help, labelNames);
  }
  protected create(): HistogramChild {
    return new HistogramCell(this.buckets);
  }
  protected valuesOf(child: HistogramChild, labels: Labels, out: MetricValueWithName<string>[]): void {
    const cell = child as HistogramCell;
    let cumulative = 0;
    this.buckets.forEach((le, i) => {
      cumulative += cell.counts[i];
      out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative });
    });
    out.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cell.count });
    out.push({ metricName: `${this.name}_sum`, labels, value: cell.sum });
    out.push({ metricName: `${this.name}_count`, labels, value: cell.count });
  }
  protected clear(child: HistogramChild): void {
    const cell = child as HistogramCell;
    cell.counts.fill(0);
    cell.sum = 0;
    cell.count = 0;
  }
}

/** A value read when Prometheus scrapes (pool sizes, queue lengths): `collect` adds the current values. */
export class Gauge {
  readonly type = 'gauge';
  private readonly sources = new Set<(add: (labels: Labels, value: number) => void) => void>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {
    if (register.getSingleMetric(name)) throw new Error(`metric ${name} is defined twice`);
    register.registerMetric(this as never);
  }

  /** Adds a source of values, read at every scrape; returns how to remove it (a closed pool). */
  source(collect: (add: (labels: Labels, value: number) => void) => void): () => void {
    this.sources.add(collect);
    return () => this.sources.delete(collect);
  }

  async get(): Promise<Scraped> {
    const values: MetricValue<string>[] = [];
    for (const collect of this.sources) collect((labels, value) => values.push({ labels, value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }

  reset(): void {}
}

/** Seconds since `start` (a `performance.now()` reading). */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}

let processMetrics = false;

/** Process metrics (CPU, memory, event-loop lag, GC, handles): prom-client's default metrics, once per process. */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics();
}

/** Every metric of this process in the Prometheus text format, with its content type. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  collectProcessMetrics();
  return { contentType: register.contentType, body: await register.metrics() };
}
