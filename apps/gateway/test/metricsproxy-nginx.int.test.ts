import { expectOnlyMembersThrough, startEchoUpstream, startNginx } from './metrics-reverse-proxies';
import { ACME, PROD, startMetricsProxyStandIns } from './metricsproxy-stand-ins';

// nginx in front of a metrics backend, configured as docs/metrics-proxy.md shows (`auth_request`, the hook's
// X-Scope-OrgID copied upstream with `auth_request_set`), asking the gateway's auth hook on stand-in backends. nginx
// runs as a child process, so this is an integration test; where no nginx binary is installed it says so and passes.
// The same check through a forward-auth proxy runs in every unit tier: metricsproxy-routes.test.ts.

describe('the metrics auth hook behind nginx', () => {
  it('lets a member through with the tenant header; a non-member gets 401 and the backend never sees the query', async () => {
    const standIns = await startMetricsProxyStandIns();
    const upstream = await startEchoUpstream();
    const nginx = await startNginx(standIns.gateway.base, upstream.url);
    try {
      if (!nginx) return console.warn('nginx is not installed (apt-get install nginx-light): the nginx auth_request case is skipped');
      await expectOnlyMembersThrough(nginx, upstream, `${ACME.id}.${PROD}`, { member: 'bob', stranger: 'mallory' });
    } finally {
      await nginx?.stop();
      await upstream.stop();
      await standIns.close();
    }
  });
});
