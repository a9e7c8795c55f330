import { createHmac } from 'node:crypto';
import { InputError, NotFoundError, ValidationError } from '@platform/errors';
import { orgsTeamsAvatarsV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Organization avatars at the edge (docs/object-storage.md), against a stand-in orgs-teams: the view, update and
// delete:avatar checks (401, 403 with the permission, 404 for an unknown organization, nothing asked of orgs-teams);
// the URL answered as a JSON string, signed with OBJECT_STORAGE_SIGNING_KEY over key and expiry for at least an
// hour, which serves the object with its type and a private cache lifetime; a missing, forged, tampered or expired
// signature 403; the multipart form (415 for another body, 422 for a form it cannot read, 400 over the size limit).
// orgs-teams' own rules (types by their bytes, dimensions, lookups, storing and deleting the files):
// apps/orgs-teams/src/avatars/avatars.int.test.ts. An uploaded image served back and a custom role granting
// update:avatar on the next request, and the generated key kept across a gateway restart:
// deploy/local/test/org-lists.int.test.ts.

const SIGNING_KEY = 'unit-signing-key-0123456789abcdef0123456789';
const MiB = 1024 * 1024;
const PNG_1x1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  alice: orgsTeamsV1.User.fromPartial({ id: 5, login: 'alice', active: true }),
  bob: orgsTeamsV1.User.fromPartial({ id: 6, login: 'bob', active: true }),
  carol: orgsTeamsV1.User.fromPartial({ id: 7, login: 'carol', active: true }),
};
const ACME = orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: 'acme', visibility: 'public' });
const DEFAULT_KEY = `avatars/default/${ACME.id}.png`;
const STORED_KEY = `avatars/org/${ACME.id}/${'a'.repeat(32)}.png`;

/** alice owns acme (every avatar permission), bob is a member (view only), carol is in no organization. */
const allowed = (userId: number, permission: string) =>
  userId === USERS.root.id || userId === USERS.alice.id || (userId === USERS.bob.id && permission === 'view:avatar');

describe('organization avatars at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  /** The avatar orgs-teams answers now. */
  let current = orgsTeamsAvatarsV1.Avatar.fromPartial({ orgId: ACME.id, source: 'default', objectKey: DEFAULT_KEY });

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
        },
        organizations: {
          getOrg: async ({ name }) => {
            if (name !== 'acme') throw new NotFoundError(`organization ${name} does not exist`);
            return ACME;
          },
        },
        avatars: {
          getAvatar: async () => current,
          updateAvatar: async ({ source, image, gravatar }) => {
            if (source === 'lookup') {
              current = orgsTeamsAvatarsV1.Avatar.fromPartial({
                orgId: ACME.id,
                source,
                externalUrl: `https://lookup.example/${gravatar}`,
              });
              return current;
            }
            if (!image.length) throw new ValidationError('avatar: give an image, or source=lookup with gravatar');
            if (image.length > MiB) throw new InputError(`avatar: the image is larger than ${MiB} bytes`);
            current = orgsTeamsAvatarsV1.Avatar.fromPartial({ orgId: ACME.id, source: 'local', objectKey: STORED_KEY });
            return current;
          },
          deleteAvatar: async () => {
            current = orgsTeamsAvatarsV1.Avatar.fromPartial({ orgId: ACME.id, source: 'default', objectKey: DEFAULT_KEY });
            return current;
          },
          getAvatarObject: async ({ key }) => {
            if (key !== DEFAULT_KEY && key !== STORED_KEY) throw new NotFoundError('no such object');
            return { body: PNG_1x1, contentType: 'image/png' };
          },
        },
      },
      authz: {
        authz: { checkPermission: async ({ userId, permission }) => ({ allowed: allowed(userId, permission), dependsOn: [] }) },
      },
    });
    ({ base, close } = await startTestGateway({
      ...backends.env,
      OBJECT_STORAGE_SIGNING_KEY: SIGNING_KEY,
      AVATAR_MAX_BYTES: String(MiB),
      PLATFORM_ADMIN_ORG: 'none',
    }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = async (who: string | undefined, method: string, path: string, body?: RequestInit['body'], type?: string) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...(who ? { authorization: `token ${who}` } : {}), ...(type ? { 'content-type': type } : {}) },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const form = (fields: Record<string, string | Buffer>) => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) {
      if (typeof v === 'string') f.append(k, v);
      else f.append(k, new Blob([v], { type: 'image/png' }), 'a.png');
    }
    return f;
  };
  const upload = (who: string | undefined, fields: Record<string, string | Buffer>, org = 'acme') =>
    call(who, 'POST', `/orgs/${org}/avatar/`, form(fields));
  /** Fetches an avatar URL as a browser would: no credentials, on this gateway. */
  const image = async (url: string) => {
    const { pathname, search } = new URL(url);
    const res = await fetch(`${base}${pathname}${search}`);
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      cache: res.headers.get('cache-control'),
      bytes: Buffer.from(await res.arrayBuffer()),
    };
  };
  const sign = (key: string, expires: number) => createHmac('sha256', SIGNING_KEY).update(`${key}\n${expires}`).digest('base64url');

  it('needs a token (401) and view:avatar (403 for a non-member); 404 for an unknown organization', async () => {
    expect((await call(undefined, 'GET', '/orgs/acme/avatar/')).status).toBe(401);
    expect(await call('carol', 'GET', '/orgs/acme/avatar/')).toEqual({
      status: 403,
      body: { message: 'you do not have the view:avatar permission', url: expect.any(String) },
    });
    expect((await call('alice', 'GET', '/orgs/nope/avatar/')).status).toBe(404);
    expect(backends.orgsTeams.callsTo('avatars', 'getAvatar')).toEqual([]);
  });

  it('answers members and site admins a JSON string URL that serves the image, privately cached', async () => {
    const member = await call('bob', 'GET', '/orgs/acme/avatar/');
    expect(member.status).toBe(200);
    expect(member.body).toMatch(
      new RegExp(`^http://[^/]+/api/v1/objects/avatars/default/${ACME.id}\\.png\\?expires=\\d+&signature=[\\w-]{43}$`),
    );
    expect((await call('root', 'GET', '/orgs/acme/avatar/')).body).toBe(member.body);
    expect((await call('alice', 'GET', '/orgs/acme/avatar')).body).toBe(member.body);
    const img = await image(member.body);
    expect([img.status, img.type, img.bytes.equals(PNG_1x1)]).toEqual([200, 'image/png', true]);
    expect(img.cache).toMatch(/^private, max-age=\d+$/);
    expect(backends.orgsTeams.callsTo('avatars', 'getAvatarObject').at(-1)).toEqual({ key: DEFAULT_KEY });
  });

  it('signs the URL with OBJECT_STORAGE_SIGNING_KEY over key and expiry, valid for at least an hour', async () => {
    const url = new URL((await call('bob', 'GET', '/orgs/acme/avatar/')).body);
    const key = url.pathname.replace('/api/v1/objects/', '');
    const expires = Number(url.searchParams.get('expires'));
    expect(url.searchParams.get('signature')).toBe(sign(key, expires));
    expect(expires - Date.now() / 1000).toBeGreaterThanOrEqual(3600 - 5);
  });

  it('refuses a missing, forged, tampered or expired signature with 403, and answers 404 for a signed unknown key', async () => {
    backends.orgsTeams.reset();
    const url = new URL((await call('bob', 'GET', '/orgs/acme/avatar/')).body);
    const key = url.pathname.replace('/api/v1/objects/', '');
    const origin = `${base}/api/v1/objects`;
    const expires = Number(url.searchParams.get('expires'));
    expect((await image(`${origin}/${key}`)).status).toBe(403);
    expect((await image(`${origin}/${key}?expires=${expires}&signature=${'A'.repeat(43)}`)).status).toBe(403);
    expect((await image(`${origin}/${key}?expires=${expires + 1}&signature=${url.searchParams.get('signature')}`)).status).toBe(403);
    expect((await image(`${origin}/avatars/default/1.png?${url.searchParams}`)).status).toBe(403);
    const past = Math.floor(Date.now() / 1000) - 10;
    const expired = await fetch(`${origin}/${key}?expires=${past}&signature=${sign(key, past)}`);
    expect([expired.status, ((await expired.json()) as { message: string }).message]).toEqual([403, 'the object URL has expired']);
    expect(backends.orgsTeams.callsTo('avatars', 'getAvatarObject')).toEqual([]);
    const future = Math.floor(Date.now() / 1000) + 600;
    const unknown = `avatars/org/${ACME.id}/${'0'.repeat(32)}.png`;
    expect((await image(`${origin}/${unknown}?expires=${future}&signature=${sign(unknown, future)}`)).status).toBe(404);
    expect((await image(`${origin}/elsewhere/x?expires=${future}&signature=${sign('elsewhere/x', future)}`)).status).toBe(404);
  });

  it('takes update:avatar to upload (401, 403 for a plain member and a non-member, 404 unknown), asking orgs-teams nothing', async () => {
    backends.orgsTeams.reset();
    expect((await upload(undefined, { avatar: PNG_1x1 })).status).toBe(401);
    expect(await upload('bob', { avatar: PNG_1x1 })).toEqual({
      status: 403,
      body: { message: 'you do not have the update:avatar permission', url: expect.any(String) },
    });
    expect((await upload('carol', { avatar: PNG_1x1 })).status).toBe(403);
    expect((await upload('alice', { avatar: PNG_1x1 }, 'nope')).status).toBe(404);
    expect(backends.orgsTeams.callsTo('avatars', 'updateAvatar')).toEqual([]);
  });

  it('passes the uploaded bytes on and answers the URL of the stored image, which serves it', async () => {
    const res = await upload('alice', { avatar: PNG_1x1 });
    expect(res.status).toBe(200);
    expect(res.body).toMatch(new RegExp(`/api/v1/objects/avatars/org/${ACME.id}/[0-9a-f]{32}\\.png\\?expires=`));
    const asked = backends.orgsTeams.callsTo('avatars', 'updateAvatar').at(-1)!;
    expect([asked.orgId, asked.source, Buffer.from(asked.image).equals(PNG_1x1), asked.userId]).toEqual([
      ACME.id,
      '',
      true,
      USERS.alice.id,
    ]);
    expect((await call('bob', 'GET', '/orgs/acme/avatar/')).body).toBe(res.body);
    expect((await image(res.body)).status).toBe(200);
  });

  it('refuses an image over the size limit with 400 (at the limit it is passed on), and passes orgs-teams’ refusals on', async () => {
    const atLimit = Buffer.concat([PNG_1x1, Buffer.alloc(MiB - PNG_1x1.length)]);
    expect((await upload('alice', { avatar: atLimit })).status).toBe(200);
    backends.orgsTeams.reset();
    expect(await upload('alice', { avatar: Buffer.concat([atLimit, Buffer.from([0])]) })).toMatchObject({
      status: 400,
      body: { message: `avatar: the image is larger than ${MiB} bytes` },
    });
    expect((await upload('alice', { avatar: Buffer.alloc(3 * MiB) })).status).toBe(400);
    expect(backends.orgsTeams.callsTo('avatars', 'updateAvatar')).toEqual([]);
    expect(await upload('alice', {})).toMatchObject({
      status: 422,
      body: { message: 'avatar: give an image, or source=lookup with gravatar' },
    });
  });

  it('answers 415 for a body that is not multipart and 422 for a form it cannot read, before orgs-teams is asked', async () => {
    backends.orgsTeams.reset();
    expect(
      (
        await call(
          'alice',
          'POST',
          '/orgs/acme/avatar/',
          JSON.stringify({ source: 'lookup', gravatar: 'x@example.com' }),
          'application/json',
        )
      ).status,
    ).toBe(415);
    expect((await upload('alice', { source: 'lookup', gravatar: 'x@example.com', federavatar: 'maybe' })).status).toBe(422);
    const twice = form({ source: 'lookup', gravatar: 'x@example.com' });
    twice.append('gravatar', 'y@example.com');
    expect((await call('alice', 'POST', '/orgs/acme/avatar/', twice)).status).toBe(422);
    const broken = '--xx\r\nContent-Disposition: form-data; name="avatar"';
    expect((await call('alice', 'POST', '/orgs/acme/avatar/', broken, 'multipart/form-data; boundary=xx')).status).toBe(422);
    expect(backends.orgsTeams.callsTo('avatars', 'updateAvatar')).toEqual([]);
  });

  it('passes a lookup on, its address trimmed, and answers the lookup URL itself', async () => {
    const res = await upload('alice', { source: 'lookup', gravatar: ' Team@Example.com ', federavatar: 'true' });
    expect(res).toEqual({ status: 200, body: 'https://lookup.example/Team@Example.com' });
    expect(backends.orgsTeams.callsTo('avatars', 'updateAvatar').at(-1)).toMatchObject({
      source: 'lookup',
      gravatar: 'Team@Example.com',
      federavatar: true,
    });
    expect((await call('bob', 'GET', '/orgs/acme/avatar/')).body).toBe(res.body);
  });

  it('takes delete:avatar to go back to the default (401, 403, 404), and answers the default URL', async () => {
    backends.orgsTeams.reset();
    expect((await call(undefined, 'POST', '/orgs/acme/avatar/delete')).status).toBe(401);
    expect(await call('bob', 'POST', '/orgs/acme/avatar/delete')).toMatchObject({
      status: 403,
      body: { message: 'you do not have the delete:avatar permission' },
    });
    expect((await call('carol', 'POST', '/orgs/acme/avatar/delete')).status).toBe(403);
    expect((await call('alice', 'POST', '/orgs/nope/avatar/delete')).status).toBe(404);
    expect(backends.orgsTeams.callsTo('avatars', 'deleteAvatar')).toEqual([]);
    const res = await call('alice', 'POST', '/orgs/acme/avatar/delete');
    expect(res.status).toBe(200);
    expect(res.body).toMatch(new RegExp(`/api/v1/objects/avatars/default/${ACME.id}\\.png\\?`));
    expect((await call('root', 'POST', '/orgs/acme/avatar/delete')).status).toBe(200);
  });
});
