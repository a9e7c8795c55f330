import { randomBytes, scryptSync } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { PasswordThreads } from './password-threads';

// scrypt on threads of its own: the same keys as Node's scrypt, one derivation per thread at a time, and libuv's pool
// (file reads, DNS, compression) left free while sign-ins are being checked.

const OPTIONS = { N: 1 << 15, r: 8, p: 1, maxmem: 128 * (1 << 15) * 8 * 2 };

describe('password threads', () => {
  it("derives Node's scrypt key, and fails a derivation Node refuses without losing the thread", async () => {
    const threads = new PasswordThreads(1);
    const salt = randomBytes(16);
    expect((await threads.derive('correct horse', salt, 32, OPTIONS)).equals(scryptSync('correct horse', salt, 32, OPTIONS))).toBe(true);
    await expect(threads.derive('x', salt, 32, { ...OPTIONS, N: 3 })).rejects.toThrow('scrypt failed');
    expect((await threads.derive('', salt, 32, OPTIONS)).equals(scryptSync('', salt, 32, OPTIONS))).toBe(true);
  });

  it("keeps libuv's pool free: a file read made while four sign-ins are checked is answered before any of them", async () => {
    const threads = new PasswordThreads(4);
    const order: string[] = [];
    const checks = Array.from({ length: 4 }, (_, i) => threads.derive(`password ${i}`, randomBytes(16), 32, OPTIONS).then(() => order.push(`check ${i}`)));
    // Node's asynchronous scrypt would hold all four of libuv's threads here, and the read would wait for one.
    await fs.readFile(__filename).then(() => order.push('file read'));
    await Promise.all(checks);
    expect(order[0]).toBe('file read');
    expect(order).toHaveLength(5);
  });

  it('runs one derivation per thread at a time, queueing the others', async () => {
    const threads = new PasswordThreads(1);
    const salt = randomBytes(16);
    const keys = await Promise.all(['a', 'b', 'c'].map((password) => threads.derive(password, salt, 32, OPTIONS)));
    expect(keys.map((k) => k.toString('hex'))).toEqual(['a', 'b', 'c'].map((p) => scryptSync(p, salt, 32, OPTIONS).toString('hex')));
  });
});
