import { createHash, createHmac } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bootTestPlatform, type TestPlatform } from './harness';

// The organization avatar rows over HTTP as a client walks them: the URL answered by GET actually
// serves the image; multipart upload with its size and type limits; lookups; delete; the view/update/
// delete:avatar checks (with a custom role granting them on the very next request); and the signed-URL
// path itself (forged, tampered, expired). Decisions: docs/object-storage.md.

const SIGNING_KEY = 'e2e-signing-key-0123456789abcdef0123456789';
const PNG_1x1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const PNG_SIGNATURE = PNG_1x1.subarray(0, 8);
const MiB = 1024 * 1024;

/** A GIF header of the given size: enough for the type and dimension checks. */
function gif(width: number, height: number): Buffer {
  const b = Buffer.alloc(64);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b;
}

/** A PNG whose header claims the given size. */
function pngClaiming(width: number, height: number): Buffer {
  const b = Buffer.from(PNG_1x1);
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

describe('organization avatars over HTTP', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  let dataDir: string;
  let devs: number;
  let acmeId: number;

  const form = (fields: Record<string, string | { bytes: Buffer; name: string; type: string }>) => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) {
      if (typeof v === 'string') f.append(k, v);
      else f.append(k, new Blob([v.bytes], { type: v.type }), v.name);
    }
    return f;
  };
  const upload = (who: string | undefined, fields: Parameters<typeof form>[0], org = 'acme') =>
    harness.send(who, 'POST', `/orgs/${org}/avatar/`, form(fields));
  /** Fetches an avatar URL as a browser would: no credentials. */
  const image = async (url: string) => {
    const res = await fetch(url);
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      cache: res.headers.get('cache-control'),
      bytes: Buffer.from(await res.arrayBuffer()),
    };
  };
  const storedFiles = () => {
    const dir = path.join(dataDir, 'objects', 'avatars', 'org', String(acmeId));
    return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  };

  // acme: owner alice; team devs with bob (member without avatar grants). carol is in no organization.
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'avatars-e2e-'));
    harness = await bootTestPlatform({ DATA_DIR: dataDir, OBJECT_STORAGE_SIGNING_KEY: SIGNING_KEY });
    for (const login of ['alice', 'bob', 'carol']) await harness.signUp(login);
    const org = await api('alice', 'POST', '/orgs', { username: 'acme' });
    expect(org.status).toBe(201);
    acmeId = org.body.id;
    const team = await api('alice', 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general', permission: 'read' });
    expect(team.status).toBe(201);
    devs = team.body.id;
    expect((await api('alice', 'PUT', `/teams/${devs}/members/bob`)).status).toBe(204);
  }, 120_000);
  afterAll(async () => {
    await harness?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describe('GET /orgs/{orgname}/avatar/', () => {
    it('needs a token (401) and view:avatar (403 for a non-member); 404 for an unknown organization', async () => {
      expect((await api(undefined, 'GET', '/orgs/acme/avatar/')).status).toBe(401);
      const outsider = await api('carol', 'GET', '/orgs/acme/avatar/');
      expect(outsider).toEqual({ status: 403, body: { message: 'you do not have the view:avatar permission', url: expect.any(String) } });
      expect((await api('alice', 'GET', '/orgs/nope/avatar/')).status).toBe(404);
    });

    it('answers members and site admins a JSON string URL that serves the generated default image', async () => {
      const member = await api('bob', 'GET', '/orgs/acme/avatar/');
      expect(member.status).toBe(200);
      expect(member.body).toMatch(
        new RegExp(`^http://[^/]+/api/v1/objects/avatars/default/${acmeId}\\.png\\?expires=\\d+&signature=[\\w-]{43}$`),
      );
      expect((await api('root', 'GET', '/orgs/acme/avatar/')).body).toBe(member.body);
      expect((await api('alice', 'GET', '/orgs/acme/avatar')).body).toBe(member.body);
      const img = await image(member.body);
      expect(img.status).toBe(200);
      expect(img.type).toBe('image/png');
      expect(img.bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
      expect(img.cache).toMatch(/^private, max-age=\d+$/);
    });
  });

  describe('the signed object URL', () => {
    const sign = (key: string, expires: number) => createHmac('sha256', SIGNING_KEY).update(`${key}\n${expires}`).digest('base64url');

    it('is signed with OBJECT_STORAGE_SIGNING_KEY over key and expiry, and valid for at least an hour', async () => {
      const url = new URL((await api('bob', 'GET', '/orgs/acme/avatar/')).body);
      const key = url.pathname.replace('/api/v1/objects/', '');
      const expires = Number(url.searchParams.get('expires'));
      expect(url.searchParams.get('signature')).toBe(sign(key, expires));
      expect(expires - Date.now() / 1000).toBeGreaterThanOrEqual(3600 - 5);
    });

    it('refuses a missing, forged, tampered or expired signature with 403, and answers 404 for a signed unknown key', async () => {
      const url = new URL((await api('bob', 'GET', '/orgs/acme/avatar/')).body);
      const key = url.pathname.replace('/api/v1/objects/', '');
      const origin = `${url.origin}/api/v1/objects`;
      const expires = Number(url.searchParams.get('expires'));
      expect((await image(`${origin}/${key}`)).status).toBe(403);
      expect((await image(`${origin}/${key}?expires=${expires}&signature=${'A'.repeat(43)}`)).status).toBe(403);
      expect((await image(`${origin}/${key}?expires=${expires + 1}&signature=${url.searchParams.get('signature')}`)).status).toBe(403);
      expect((await image(`${origin}/avatars/default/1.png?${url.searchParams}`)).status).toBe(403);
      const past = Math.floor(Date.now() / 1000) - 10;
      const expired = await fetch(`${origin}/${key}?expires=${past}&signature=${sign(key, past)}`);
      expect(expired.status).toBe(403);
      expect(((await expired.json()) as { message: string }).message).toBe('the object URL has expired');
      const future = Math.floor(Date.now() / 1000) + 600;
      const unknown = `avatars/org/${acmeId}/${'0'.repeat(32)}.png`;
      expect((await image(`${origin}/${unknown}?expires=${future}&signature=${sign(unknown, future)}`)).status).toBe(404);
      expect((await image(`${origin}/elsewhere/x?expires=${future}&signature=${sign('elsewhere/x', future)}`)).status).toBe(404);
    });
  });

  describe('POST /orgs/{orgname}/avatar/', () => {
    it('needs a token (401) and update:avatar (403 for a plain member and for a non-member)', async () => {
      expect((await upload(undefined, { avatar: { bytes: PNG_1x1, name: 'a.png', type: 'image/png' } })).status).toBe(401);
      const member = await upload('bob', { avatar: { bytes: PNG_1x1, name: 'a.png', type: 'image/png' } });
      expect(member).toEqual({ status: 403, body: { message: 'you do not have the update:avatar permission', url: expect.any(String) } });
      expect((await upload('carol', { avatar: { bytes: PNG_1x1, name: 'a.png', type: 'image/png' } })).status).toBe(403);
      expect((await upload('alice', { avatar: { bytes: PNG_1x1, name: 'a.png', type: 'image/png' } }, 'nope')).status).toBe(404);
      expect(storedFiles()).toEqual([]);
    });

    it('stores an uploaded image: 200 with the URL, which serves exactly the uploaded bytes', async () => {
      const res = await upload('alice', { avatar: { bytes: PNG_1x1, name: 'logo.png', type: 'image/png' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatch(new RegExp(`/api/v1/objects/avatars/org/${acmeId}/[0-9a-f]{32}\\.png\\?expires=`));
      expect((await api('bob', 'GET', '/orgs/acme/avatar/')).body).toBe(res.body);
      const img = await image(res.body);
      expect([img.status, img.type]).toEqual([200, 'image/png']);
      expect(img.bytes.equals(PNG_1x1)).toBe(true);
      expect(storedFiles()).toHaveLength(1);
    });

    it('judges the type by the bytes: a GIF sent as image/png is stored as a GIF; text, SVG and ICO are 422', async () => {
      const g = gif(32, 32);
      const res = await upload('alice', { avatar: { bytes: g, name: 'x.png', type: 'image/png' } });
      expect(res.status).toBe(200);
      const img = await image(res.body);
      expect([img.type, img.bytes.equals(g)]).toEqual(['image/gif', true]);
      for (const [bytes, name, type] of [
        [Buffer.from('definitely not an image'), 'a.png', 'image/png'],
        [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'a.svg', 'image/svg+xml'],
        [Buffer.from([0, 0, 1, 0, 1, 0, 16, 16, ...Array(30).fill(0)]), 'a.ico', 'image/x-icon'],
      ] as const) {
        const refused = await upload('alice', { avatar: { bytes, name, type } });
        expect(refused).toMatchObject({ status: 422, body: { message: 'avatar: the file is not a PNG, JPEG, GIF or WebP image' } });
      }
      expect((await api('alice', 'GET', '/orgs/acme/avatar/')).body).toBe(res.body);
    });

    it('enforces the size limit (1 MiB) and the dimension limit (4096 px) with 400', async () => {
      const atLimit = Buffer.concat([PNG_1x1, Buffer.alloc(MiB - PNG_1x1.length)]);
      expect((await upload('alice', { avatar: { bytes: atLimit, name: 'big.png', type: 'image/png' } })).status).toBe(200);
      const over = Buffer.concat([atLimit, Buffer.from([0])]);
      const tooBig = await upload('alice', { avatar: { bytes: over, name: 'big.png', type: 'image/png' } });
      expect(tooBig).toMatchObject({ status: 400, body: { message: `avatar: the image is larger than ${MiB} bytes` } });
      const huge = await upload('alice', { avatar: { bytes: Buffer.alloc(3 * MiB), name: 'huge.png', type: 'image/png' } });
      expect(huge.status).toBe(400);
      const wide = await upload('alice', { avatar: { bytes: pngClaiming(5000, 10), name: 'wide.png', type: 'image/png' } });
      expect(wide).toMatchObject({ status: 400, body: { message: 'avatar: the image must be between 1 and 4096 pixels wide and high' } });
    });

    it('answers 415 for a body that is not multipart, 422 for forms it cannot use: no image or lookup, wrong file field, bad fields', async () => {
      // The row accepts multipart/form-data only: JSON is another content type, so 415.
      expect((await api('alice', 'POST', '/orgs/acme/avatar/', { source: 'lookup', gravatar: 'x@example.com' })).status).toBe(415);
      expect((await upload('alice', {})).status).toBe(422);
      expect((await upload('alice', { file: { bytes: PNG_1x1, name: 'a.png', type: 'image/png' } })).status).toBe(422);
      expect((await upload('alice', { source: 'local' })).status).toBe(422);
      expect((await upload('alice', { source: 'remote', avatar: { bytes: PNG_1x1, name: 'a.png', type: 'image/png' } })).status).toBe(422);
      expect((await upload('alice', { source: 'lookup' })).status).toBe(422);
      expect((await upload('alice', { source: 'lookup', gravatar: 'not-an-email' })).status).toBe(422);
      expect((await upload('alice', { source: 'lookup', gravatar: 'x@example.com', federavatar: 'maybe' })).status).toBe(422);
      const broken = await harness.send('alice', 'POST', '/orgs/acme/avatar/', '--xx\r\nContent-Disposition: form-data; name="avatar"', {
        'content-type': 'multipart/form-data; boundary=xx',
      });
      expect(broken.status).toBe(422);
    });

    it('switches to a Gravatar or Libravatar lookup: the stored image is deleted and its URL stops serving', async () => {
      const stored = (await api('alice', 'GET', '/orgs/acme/avatar/')).body;
      expect((await image(stored)).status).toBe(200);
      const md5 = createHash('md5').update('team@example.com').digest('hex');
      const res = await upload('alice', { source: 'lookup', gravatar: ' Team@Example.com ' });
      expect(res).toEqual({ status: 200, body: `https://secure.gravatar.com/avatar/${md5}?d=identicon` });
      expect((await api('bob', 'GET', '/orgs/acme/avatar/')).body).toBe(res.body);
      expect((await image(stored)).status).toBe(404);
      expect(storedFiles()).toEqual([]);
      const fed = await upload('alice', { source: 'lookup', gravatar: 'team@example.com', federavatar: 'true' });
      expect(fed).toEqual({ status: 200, body: `https://seccdn.libravatar.org/avatar/${md5}?d=identicon` });
    });

    it('follows a custom role granting update:avatar on the very next request, and its removal too', async () => {
      const role = await api('alice', 'POST', '/authz/roles?org=acme', {
        name: 'avatar-editors',
        permissions: [{ namespace: 'avatar', action: 'update' }],
        teamIDs: [devs],
      });
      expect(role.status).toBe(201);
      const granted = await upload('bob', { avatar: { bytes: PNG_1x1, name: 'bob.png', type: 'image/png' } });
      expect(granted.status).toBe(200);
      expect((await image(granted.body)).bytes.equals(PNG_1x1)).toBe(true);
      // The role carries update only: deleting still takes delete:avatar.
      expect((await api('bob', 'POST', '/orgs/acme/avatar/delete')).status).toBe(403);
      expect((await api('alice', 'DELETE', `/authz/roles/${role.body.id}?org=acme`)).status).toBe(204);
      expect((await upload('bob', { avatar: { bytes: gif(8, 8), name: 'bob.gif', type: 'image/gif' } })).status).toBe(403);
    });
  });

  describe('POST /orgs/{orgname}/avatar/delete', () => {
    it('needs a token (401) and delete:avatar (403)', async () => {
      expect((await api(undefined, 'POST', '/orgs/acme/avatar/delete')).status).toBe(401);
      expect((await api('bob', 'POST', '/orgs/acme/avatar/delete')).status).toBe(403);
      expect((await api('carol', 'POST', '/orgs/acme/avatar/delete')).status).toBe(403);
      expect((await api('alice', 'POST', '/orgs/nope/avatar/delete')).status).toBe(404);
      expect(storedFiles()).toHaveLength(1);
    });

    it('returns to the generated default: 200 with its URL; the stored image is deleted and stops serving', async () => {
      const stored = (await api('alice', 'GET', '/orgs/acme/avatar/')).body;
      const res = await api('alice', 'POST', '/orgs/acme/avatar/delete');
      expect(res.status).toBe(200);
      expect(res.body).toMatch(new RegExp(`/api/v1/objects/avatars/default/${acmeId}\\.png\\?`));
      expect((await api('bob', 'GET', '/orgs/acme/avatar/')).body).toBe(res.body);
      expect((await image(res.body)).type).toBe('image/png');
      expect((await image(stored)).status).toBe(404);
      expect(storedFiles()).toEqual([]);
      // Deleting the default again is harmless; a site admin may do it too.
      expect((await api('root', 'POST', '/orgs/acme/avatar/delete')).status).toBe(200);
    });
  });
});

describe('signed object URLs without OBJECT_STORAGE_SIGNING_KEY (embedded mode)', () => {
  let harness: TestPlatform;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'avatars-embedded-'));
    harness = await bootTestPlatform({ DATA_DIR: dataDir });
  }, 120_000);
  afterAll(async () => {
    await harness?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('generates the key under DATA_DIR, shared by the processes that sign, and keeps it, so URLs survive a gateway restart', async () => {
    // The marketplace listener (installer links) reads the key at its start, the gateway on first use; the first
    // to create the file wins and both sign with it.
    const keyFile = path.join(dataDir, 'object-storage', 'signing-key');
    expect((await harness.api('root', 'POST', '/orgs', { username: 'solo' })).status).toBe(201);
    const body = new FormData();
    body.append('avatar', new Blob([PNG_1x1], { type: 'image/png' }), 'a.png');
    const uploaded = await harness.send('root', 'POST', '/orgs/solo/avatar/', body);
    expect(uploaded.status).toBe(200);
    const url = new URL(uploaded.body as string);

    const key = fs.readFileSync(keyFile, 'utf8').trim();
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    const objectKey = url.pathname.replace('/api/v1/objects/', '');
    expect(url.searchParams.get('signature')).toBe(
      createHmac('sha256', key)
        .update(`${objectKey}\n${url.searchParams.get('expires')}`)
        .digest('base64url'),
    );
    // Stored as a file under DATA_DIR/objects.
    expect(fs.existsSync(path.join(dataDir, 'objects', ...objectKey.split('/')))).toBe(true);

    await harness.platform.stopApp('gateway');
    await harness.platform.startApp('gateway');
    const port = harness.platform.apps.get('gateway')!.httpPort;
    const again = await fetch(`http://localhost:${port}${url.pathname}${url.search}`);
    expect(again.status).toBe(200);
    expect(Buffer.from(await again.arrayBuffer()).equals(PNG_1x1)).toBe(true);
    expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(key);
  });
});
