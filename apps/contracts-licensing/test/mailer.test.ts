import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { smtpMailer } from '../src/notices/mailer';

// One SMTP attempt is bounded as a whole by SMTP_TIMEOUT_MS (docs/notifications.md): a server that accepts the
// connection and never answers fails the attempt when that time is up, and leaves no connection open; a server that
// refuses fails it at once, with its answer and never the password.

const TIMEOUT_MS = 5_000;
const mail = { to: 'boss@acme.test', subject: 'quota', text: 'used', html: '<p>used</p>' };

/** A loopback TCP server doing `onConnection` with each connection; its port. */
async function tcpServer(onConnection: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(onConnection);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

const mailerOn = (port: number) =>
  smtpMailer({
    SMTP_URL: `smtp://mailer:s3cret-pw@127.0.0.1:${port}`,
    SMTP_FROM: 'Platform <noreply@platform.test>',
    SMTP_REQUIRE_TLS: false,
    SMTP_TIMEOUT_MS: TIMEOUT_MS,
  });

describe('the SMTP mailer', () => {
  afterEach(() => jest.useRealTimers());

  it('gives an attempt up after SMTP_TIMEOUT_MS when the server accepts the connection and never answers, and closes it', async () => {
    // Only the timers are fake: the connection is real I/O.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'hrtime', 'performance', 'Date'] });
    let connected!: (socket: Socket) => void;
    const connection = new Promise<Socket>((r) => (connected = r));
    const { server, port } = await tcpServer((socket) => connected(socket));
    const mailer = mailerOn(port);
    let outcome: unknown;
    const sending = mailer.send(mail).then(
      () => (outcome = 'sent'),
      (err: Error) => (outcome = err),
    );
    const socket = await connection;
    const closed = new Promise((r) => socket.once('close', r));
    await jest.advanceTimersByTimeAsync(TIMEOUT_MS - 1);
    expect(outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    await sending;
    expect((outcome as Error).message).toBe(`the mail server did not take the mail within ${TIMEOUT_MS} ms`);
    // The connection is not left behind.
    await closed;
    mailer.close();
    server.close();
  });

  it('fails an attempt at once when the server refuses the connection or the mail, naming its answer without the password', async () => {
    const { server: gone, port: goneport } = await tcpServer(() => {});
    await new Promise<void>((r) => gone.close(() => r()));
    const refusedConnection = mailerOn(goneport);
    await expect(refusedConnection.send(mail)).rejects.toThrow(/ECONNREFUSED/);
    refusedConnection.close();

    const { server, port } = await tcpServer((socket) => socket.end('554 5.3.2 not accepting mail\r\n'));
    const refusing = mailerOn(port);
    const err = (await refusing.send(mail).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/554|not accepting/);
    expect(err.message).not.toContain('s3cret-pw');
    refusing.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
});
