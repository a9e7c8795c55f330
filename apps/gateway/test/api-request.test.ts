import { ApiRequest, compileTrust, type Incoming, type Outgoing } from '../src/api-request';

// What a row reads of its request, as Express gave it before the API's rows left Express: the client's address and
// scheme through TRUST_PROXY, the query as Express's extended parser read it, headers by any name.

function request(opts: { url?: string; headers?: Record<string, string>; peer?: string; trust?: number | string[] }): ApiRequest {
  const url = opts.url ?? '/api/v1/orgs';
  const [path, search = ''] = url.slice('/api/v1'.length).split('?');
  const raw = {
    method: 'GET',
    url,
    headers: opts.headers ?? {},
    socket: { remoteAddress: opts.peer ?? '10.0.0.1', encrypted: false },
    connection: { remoteAddress: opts.peer ?? '10.0.0.1' },
  } as unknown as Incoming;
  return new ApiRequest(raw, {} as Outgoing, '/api/v1', path || '/', search, compileTrust(opts.trust));
}

describe('a request as the rows read it', () => {
  it('names the peer as the client unless TRUST_PROXY believes it, and then the client it forwards', () => {
    const forwarded = { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' };
    expect(request({ headers: forwarded }).ip).toBe('10.0.0.1');
    expect(request({ headers: forwarded }).secure).toBe(false);
    expect(request({ headers: forwarded, trust: ['10.0.0.0/8'] }).ip).toBe('203.0.113.7');
    expect(request({ headers: forwarded, trust: ['10.0.0.0/8'] }).secure).toBe(true);
    expect(request({ headers: forwarded, trust: 1 }).ip).toBe('203.0.113.7');
    // A peer TRUST_PROXY does not name is the client, whatever it forwards.
    expect(request({ headers: forwarded, peer: '198.51.100.1', trust: ['10.0.0.0/8'] }).ip).toBe('198.51.100.1');
  });

  it('reads the query as Express’s extended parser did, and the path below the API root', () => {
    const req = request({ url: '/api/v1/orgs/acme/teams?page=2&q=a%20b&filter[name]=x' });
    expect(req.path).toBe('/orgs/acme/teams');
    expect(req.query).toEqual({ page: '2', q: 'a b', filter: { name: 'x' } });
    expect(request({ url: '/api/v1/orgs' }).query).toEqual({});
    expect(request({ url: '/api/v1' }).path).toBe('/');
  });

  it('answers a header by any name, Referer and Referrer alike', () => {
    const req = request({ headers: { referer: 'https://console.example/x', 'if-none-match': '"abc"' } });
    expect(req.get('Referrer')).toBe('https://console.example/x');
    expect(req.get('If-None-Match')).toBe('"abc"');
    expect(req.get('x-missing')).toBeUndefined();
  });
});
