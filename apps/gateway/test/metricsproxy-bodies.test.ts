import { BackendContext, backendMessage, connectionJson, RegisterRequest } from '../src/sections/metricsproxy/presenters';

// The metrics-proxy bodies as Go agents send them: every field present, a zero value ("" or null, or a struct of
// zero values) for one left unset, which must read as absent (docs/metrics-proxy.md).

const CLUSTER = '0b7d4c1e-5f0a-4c5e-9d7b-2a1f6e3c9b10';
const CA = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUY2E=\n-----END CERTIFICATE-----\n';
const ZERO_SERVICE = { scheme: '', name: '', namespace: '', port: '', path: '', query: '' };
const ZERO_TLS = { ca: '', cert: '', key: '', serverName: '', insecureSkipTLSVerify: false };
const ZERO_CONTEXT = { hubUID: '', clusterUID: '', projectId: '', default: false, issueToken: false, clientOrgID: '' };

/** A Go agent's RegisterRequest: every field, zero where unset. */
const goRequest = (backend: Record<string, unknown>, context: Record<string, unknown> = {}) => ({
  ...ZERO_CONTEXT,
  clusterUID: CLUSTER,
  ...context,
  backend: { url: '', service: ZERO_SERVICE, basicAuth: { username: '', password: '' }, bearerToken: '', tls: ZERO_TLS, ...backend },
});

const issues = (body: unknown) => {
  const r = RegisterRequest.safeParse(body);
  return r.success ? [] : r.error.issues.map((i) => [i.path.join('.'), i.message]);
};

describe('metrics-proxy bodies from Go clients', () => {
  it('reads "", null and structs of zero values as absent fields', () => {
    const parsed = RegisterRequest.parse(goRequest({ url: 'https://prom.example:9090' }));
    expect(parsed).toEqual({ clusterUID: CLUSTER, default: false, issueToken: false, backend: { url: 'https://prom.example:9090' } });
    const nulls = RegisterRequest.parse({
      clusterUID: CLUSTER,
      hubUID: null,
      projectId: null,
      clientOrgID: null,
      default: null,
      issueToken: null,
      backend: { url: 'https://prom.example:9090', service: null, basicAuth: null, bearerToken: null, tls: null },
    });
    expect(nulls).toEqual({ clusterUID: CLUSTER, backend: { url: 'https://prom.example:9090' } });
    // What goes to the service and comes back is what an absent field gives.
    expect(backendMessage(parsed.backend)).toEqual(backendMessage({ url: 'https://prom.example:9090' }));
    expect(connectionJson(parsed.backend, 'https://prom.example:9090')).toEqual({ url: 'https://prom.example:9090' });
  });

  it('keeps what is set beside the zero values: a service, a bearer token, part of the TLS settings', () => {
    const service = RegisterRequest.parse(
      goRequest({ service: { ...ZERO_SERVICE, name: 'prometheus', namespace: 'monitoring', port: '9090' } }),
    );
    expect(service.backend).toEqual({ service: { name: 'prometheus', namespace: 'monitoring', port: '9090' } });
    expect(backendMessage(service.backend).service).toEqual({
      scheme: 'http',
      name: 'prometheus',
      namespace: 'monitoring',
      port: '9090',
      path: '',
      query: '',
    });
    const token = RegisterRequest.parse(goRequest({ url: 'https://prom.example', bearerToken: 't0ken', tls: { ...ZERO_TLS, ca: CA } }));
    expect(token.backend).toEqual({ url: 'https://prom.example', bearerToken: 't0ken', tls: { ca: CA, insecureSkipTLSVerify: false } });
    const skip = RegisterRequest.parse(goRequest({ url: 'https://prom.example', tls: { ...ZERO_TLS, insecureSkipTLSVerify: true } }));
    expect(skip.backend.tls).toEqual({ insecureSkipTLSVerify: true });
    const nilFlag = RegisterRequest.parse(
      goRequest({ url: 'https://prom.example', tls: { ...ZERO_TLS, serverName: 'prom', insecureSkipTLSVerify: null } }),
    );
    expect(nilFlag.backend.tls).toEqual({ serverName: 'prom' });
  });

  it('uses the url when both url and service are given, and drops the service', () => {
    const both = RegisterRequest.parse(
      goRequest({
        url: 'https://prom.example:9090',
        service: { scheme: 'https', name: 'prometheus', namespace: 'monitoring', port: '9090', path: '', query: '' },
      }),
    );
    expect(both.backend).toEqual({ url: 'https://prom.example:9090' });
    expect(backendMessage(both.backend)).toMatchObject({ url: 'https://prom.example:9090', service: undefined });
  });

  it('still refuses what is wrong, naming the field', () => {
    expect(issues(goRequest({}))).toEqual([['backend.url', 'give either url or service']]);
    expect(issues(goRequest({ url: 'ftp://prom' }))).toEqual([['backend.url', 'must be an http:// or https:// URL']]);
    expect(issues(goRequest({ service: { ...ZERO_SERVICE, name: 'prometheus', port: '9090' } }))).toEqual([
      ['backend.service.namespace', 'required in a service'],
    ]);
    expect(issues(goRequest({ service: { ...ZERO_SERVICE, scheme: 'ftp', name: 'p', namespace: 'm', port: '1' } }))[0][0]).toBe(
      'backend.service.scheme',
    );
    expect(issues(goRequest({ url: 'https://p', basicAuth: { username: 'reader', password: '' } }))).toEqual([
      ['backend.basicAuth.password', 'username and password go together'],
    ]);
    expect(issues(goRequest({ url: 'https://p', basicAuth: { username: 'u', password: 'p' }, bearerToken: 't' }))).toEqual([
      ['backend.bearerToken', 'give basicAuth or bearerToken, not both'],
    ]);
    expect(issues(goRequest({ url: 'https://p', tls: { ...ZERO_TLS, ca: 'not pem' } }))).toEqual([
      ['backend.tls.ca', 'must be a PEM-encoded CA certificate'],
    ]);
    expect(issues(goRequest({ url: 'https://p', tls: { ...ZERO_TLS, cert: CA } }))).toEqual([
      ['backend.tls.key', 'cert and key go together'],
    ]);
    expect(issues(goRequest({ url: 'https://p' }, { clusterUID: '' }))).toEqual([['clusterUID', 'give clusterUID or hubUID']]);
    expect(issues(goRequest({ url: 'https://p' }, { projectId: 'a.b' }))[0][0]).toBe('projectId');
  });

  it('reads the unregister body the same way', () => {
    expect(BackendContext.parse({ ...ZERO_CONTEXT, hubUID: CLUSTER })).toEqual({ hubUID: CLUSTER, default: false, issueToken: false });
    expect(BackendContext.safeParse(ZERO_CONTEXT).success).toBe(false);
  });
});
