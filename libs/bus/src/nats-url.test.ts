import { natsConnectOptions, natsServerAddress } from './nats-bus';

// What a NATS_URL gives the client: nats.js reads no credentials from a URL, so they must come out of it as options.

describe('a NATS_URL as the client is given it', () => {
  it('carries a user and password as options, the servers without them', () => {
    expect(natsConnectOptions('nats://tester:s3cret@nats.internal:4222')).toEqual({
      servers: ['nats://nats.internal:4222'],
      user: 'tester',
      pass: 's3cret',
    });
  });

  it('takes a lone user name as a token, and undoes percent-encoding', () => {
    expect(natsConnectOptions('tls://t0k%40en@nats.internal')).toEqual({ servers: ['tls://nats.internal'], token: 't0k@en' });
    expect(natsConnectOptions('nats://me:p%3Ass@h:1')).toMatchObject({ user: 'me', pass: 'p:ss' });
  });

  it("keeps every node of a cluster's URL, with the first credentials given", () => {
    expect(natsConnectOptions('nats://a:1, nats://u:p@b:2,nats://v:q@c:3')).toEqual({
      servers: ['nats://a:1', 'nats://b:2', 'nats://c:3'],
      user: 'u',
      pass: 'p',
    });
  });

  it('leaves a URL without credentials as it is', () => {
    expect(natsConnectOptions('nats://127.0.0.1:4222')).toEqual({ servers: ['nats://127.0.0.1:4222'] });
    expect(natsConnectOptions('127.0.0.1:4222')).toEqual({ servers: ['127.0.0.1:4222'] });
  });

  it('names servers by host:port only in what it says', () => {
    expect(natsServerAddress('nats://user:pa:ss@nats.example:4223')).toBe('nats.example:4223');
    expect(natsServerAddress('tls://token@nats.example')).toBe('nats.example:4222');
    expect(natsServerAddress('nats://a:1, nats://u:p@b:2/x')).toBe('a:1,b:2');
    expect(natsServerAddress('127.0.0.1:4222')).toBe('127.0.0.1:4222');
  });
});
