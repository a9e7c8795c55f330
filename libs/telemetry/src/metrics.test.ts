import { Counter, Gauge, Histogram, metricsText } from './metrics';
import { serveMetrics } from './metrics-server';

describe('metrics', () => {
  const requests = new Counter('test_requests_total', 'Requests.', ['route', 'status']);
  const latency = new Histogram('test_latency_seconds', 'Latency.', ['route'], [0.01, 0.1, 1]);
  const pool = new Gauge('test_pool_connections', 'Connections.');

  it('renders counters, cumulative histogram buckets and gauges in the Prometheus text format', async () => {
    const ok = requests.child('/orgs/:orgname', 200);
    ok.inc();
    ok.inc();
    requests.child('/orgs/:orgname', 404).inc();
    expect(requests.child('/orgs/:orgname', 200)).toBe(ok);
    const h = latency.child('/orgs/:orgname');
    for (const v of [0.005, 0.01, 0.05, 0.5, 3]) h.observe(v);
    const stop = pool.source((add) => add({ pool: 'authz', state: 'used' }, 3));

    const { body, contentType } = await metricsText();
    expect(contentType).toMatch(/^text\/plain/);
    expect(body).toContain('# TYPE test_requests_total counter');
    expect(body).toContain('test_requests_total{route="/orgs/:orgname",status="200"} 2');
    expect(body).toContain('test_requests_total{route="/orgs/:orgname",status="404"} 1');
    expect(body).toContain('# TYPE test_latency_seconds histogram');
    expect(body).toContain('test_latency_seconds_bucket{route="/orgs/:orgname",le="0.01"} 2');
    expect(body).toContain('test_latency_seconds_bucket{route="/orgs/:orgname",le="0.1"} 3');
    expect(body).toContain('test_latency_seconds_bucket{route="/orgs/:orgname",le="1"} 4');
    expect(body).toContain('test_latency_seconds_bucket{route="/orgs/:orgname",le="+Inf"} 5');
    expect(body).toContain('test_latency_seconds_sum{route="/orgs/:orgname"} 3.565');
    expect(body).toContain('test_latency_seconds_count{route="/orgs/:orgname"} 5');
    expect(body).toContain('test_pool_connections{pool="authz",state="used"} 3');
    // Process metrics come with every answer.
    expect(body).toContain('process_cpu_seconds_total');
    stop();
    expect((await metricsText()).body).not.toContain('test_pool_connections{');
  });

  it('refuses a second metric of the same name and a wrong number of label values', () => {
    expect(() => new Counter('test_requests_total', 'again', [])).toThrow('defined twice');
    expect(() => requests.child('/x')).toThrow('takes 2 label values');
  });

  it('serves GET /metrics on its own port, 404 elsewhere, and names EADDRINUSE when the port is taken', async () => {
    const server = await serveMetrics(0, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('test_requests_total');
      expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
      await expect(serveMetrics(server.port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await server.close();
    }
  });

  // What a held child costs is measured in metrics.ts's comment, not asserted: a time bound races a busy machine.
  it('counts every observation made through a held child, which is the one the family keeps', async () => {
    const child = latency.child('/hot');
    const counter = requests.child('/hot', 200);
    expect(latency.child('/hot')).toBe(child);
    expect(requests.child('/hot', 200)).toBe(counter);
    for (let i = 0; i < 1_000_000; i++) {
      child.observe(0.02);
      counter.inc();
    }
    const { body } = await metricsText();
    expect(body).toContain('test_requests_total{route="/hot",status="200"} 1000000');
    expect(body).toContain('test_latency_seconds_bucket{route="/hot",le="0.01"} 0');
    expect(body).toContain('test_latency_seconds_bucket{route="/hot",le="0.1"} 1000000');
    expect(body).toContain('test_latency_seconds_count{route="/hot"} 1000000');
  });
});
