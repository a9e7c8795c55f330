import { Counter, Histogram, secondsSince } from '@platform/telemetry';

/** Authorization checks: how many, their answers, and how long the engine took (embedded or OpenFGA). */

const checks = new Counter(
  'authz_checks_total',
  'Authorization checks answered, by RPC (check, batch_check, check_permission) and result (allowed, denied, error); a batch counts each of its checks.',
  ['rpc', 'result'],
);
const latency = new Histogram(
  'authz_check_duration_seconds',
  'Time an authorization check RPC took, by RPC (a batch is one observation).',
  ['rpc'],
);

type Rpc = 'check' | 'batch_check' | 'check_permission';

const children = (rpc: Rpc) => ({
  allowed: checks.child(rpc, 'allowed'),
  denied: checks.child(rpc, 'denied'),
  error: checks.child(rpc, 'error'),
  seconds: latency.child(rpc),
});
const RPCS = { check: children('check'), batch_check: children('batch_check'), check_permission: children('check_permission') };

/** Counts the answer(s) of one check RPC and its latency; passes the answer (or the failure) on. */
export async function measureCheck<T extends boolean | boolean[]>(rpc: Rpc, answer: () => Promise<T>): Promise<T> {
  const m = RPCS[rpc];
  const start = performance.now();
  try {
    const allowed = await answer();
    if (typeof allowed === 'boolean') (allowed ? m.allowed : m.denied).inc();
    else for (const one of allowed as boolean[]) (one ? m.allowed : m.denied).inc();
    return allowed;
  } catch (err) {
    m.error.inc();
    throw err;
  } finally {
    m.seconds.observe(secondsSince(start));
  }
}
