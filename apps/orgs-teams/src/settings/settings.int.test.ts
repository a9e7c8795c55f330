import { openDatabase, type Database } from '@platform/db';
import { ConflictError, InputError } from '@platform/errors';
import { createTestDatabase } from '@platform/testing';
import { migrations } from '../../migrations';
import { siteSettings } from '../../migrations/20261122030000_site_settings';
import { DEFAULT_APP_NAME, DEFAULT_PRIMARY_COLOR, MAX_LOGO_BYTES, normalizeDomain, SiteSettings } from './settings';

const FACTS = { runMode: 'dev', deploymentType: 'SelfHostedProduction', isOfflineInstaller: true };

/** A real 2×3 PNG (IHDR says so); the rest of the file is not needed for sniffing. */
function png(width: number, height: number, extra = 0): Buffer {
  const b = Buffer.alloc(33 + extra);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).copy(b);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}
const dataUri = (mime: string, bytes: Buffer) => `data:${mime};base64,${bytes.toString('base64')}`;
/** A Windows icon directory with one 48×48 entry. */
const ico = Buffer.from([0, 0, 1, 0, 1, 0, 48, 48, 0, 0, 1, 0, 32, 0, 0, 0, 0, 0, 22, 0, 0, 0]);

describe('SiteSettings (identity schema, real Postgres)', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let settings: SiteSettings;

  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'identity' });
    await db.migrate(migrations);
    settings = new SiteSettings(db, FACTS);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  describe('branding', () => {
    it('answers the defaults and the deployment facts before anything is set', async () => {
      const b = await settings.getBranding();
      expect(b).toEqual({
        logo: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
        favicons: { any: expect.stringMatching(/^data:image\/svg\+xml;base64,/) },
        primaryColor: DEFAULT_PRIMARY_COLOR,
        runMode: 'dev',
        deploymentType: 'SelfHostedProduction',
        isOfflineInstaller: true,
        showAppTag: false,
        appName: DEFAULT_APP_NAME,
        etag: expect.stringMatching(/^"[\w-]{43}"$/),
      });
    });

    it('keeps its entity tag until a setting changes', async () => {
      const before = (await settings.getBranding()).etag;
      expect((await settings.getBranding()).etag).toBe(before);
      const after = await settings.updateBranding({ appName: 'Renamed', userId: 0 } as never);
      expect(after.etag).not.toBe(before);
      expect((await settings.getBranding()).etag).toBe(after.etag);
      await settings.updateBranding({ appName: '', userId: 0 } as never);
    });

    it('changes only the supplied options, keeps them, and resets one with ""', async () => {
      const logo = dataUri('image/png', png(120, 40));
      await settings.updateBranding({ logo, primaryColor: '#ABCDEF', appName: '  Acme Cloud ', showAppTag: true, userId: 1 });
      await settings.updateBranding({ favicon: dataUri('image/x-icon', ico), userId: 1 });
      const b = await new SiteSettings(db, FACTS).getBranding();
      expect(b).toMatchObject({ logo, primaryColor: '#abcdef', appName: 'Acme Cloud', showAppTag: true });
      expect(b.favicons).toEqual({ '48x48': dataUri('image/x-icon', ico) });

      const reset = await settings.updateBranding({ appName: '', primaryColor: '', userId: 1 });
      expect(reset).toMatchObject({ appName: DEFAULT_APP_NAME, primaryColor: DEFAULT_PRIMARY_COLOR, logo, showAppTag: true });
    });

    it('refuses invalid options with 400 and writes nothing of the request', async () => {
      const before = await settings.getBranding();
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ primaryColor: 'red' }, /primaryColor/],
        [{ primaryColor: '#12345' }, /primaryColor/],
        [{ appName: 'x'.repeat(65) }, /appName/],
        [{ appName: 'a\u0007b' }, /appName/],
        [{ logo: 'https://example.com/logo.png' }, /logo: must be a base64 image data URI/],
        [{ logo: 'data:text/html;base64,PGgxPg==' }, /logo: image type text\/html is not accepted/],
        [{ logo: dataUri('image/png', Buffer.from('GIF89a\x01\x00\x01\x00')) }, /logo: the data is not an image of type image\/png/],
        [{ logo: dataUri('image/png', png(10, 10, MAX_LOGO_BYTES)) }, /logo: the image is larger than/],
        [{ logo: 'data:image/png;base64,iVBORw0KGgo' }, /malformed/],
        [{ favicon: dataUri('image/svg+xml', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>')) }, /favicon: SVG/],
        [{ favicon: dataUri('image/svg+xml', Buffer.from('<svg><script>alert(1)</script></svg>')) }, /favicon: SVG/],
        // A valid color with an invalid logo: nothing is written.
        [{ primaryColor: '#000000', logo: 'nope' }, /logo/],
      ];
      for (const [options, message] of bad) {
        const err = await settings.updateBranding({ ...options, userId: 1 }).catch((e) => e);
        expect(err).toBeInstanceOf(InputError);
        expect(err.message).toMatch(message);
      }
      expect(await settings.getBranding()).toEqual(before);
    });

    it('accepts an inert SVG logo and reports an SVG favicon as size "any"', async () => {
      const svg = dataUri(
        'image/svg+xml',
        Buffer.from('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>'),
      );
      const b = await settings.updateBranding({ logo: svg, favicon: svg, userId: 1 });
      expect(b.logo).toBe(svg);
      expect(b.favicons).toEqual({ any: svg });
    });
  });

  describe('allowed domains', () => {
    it('starts empty, adds lower-cased sorted domains, 409 on a duplicate, removes, 400 when absent', async () => {
      expect(await settings.listDomains()).toEqual([]);
      expect(await settings.addDomain('Example.COM', 1)).toEqual(['example.com']);
      expect(await settings.addDomain('a-b.example.org.', 1)).toEqual(['a-b.example.org', 'example.com']);
      await expect(settings.addDomain('EXAMPLE.com', 1)).rejects.toBeInstanceOf(ConflictError);
      expect(await settings.removeDomain('example.COM')).toEqual(['a-b.example.org']);
      await expect(settings.removeDomain('example.com')).rejects.toThrow(/not in the allowed domains/);
      await expect(settings.removeDomain('example.com')).rejects.toBeInstanceOf(InputError);
      expect(await settings.listDomains()).toEqual(['a-b.example.org']);
    });

    it('validates domain names by the hostname rule', () => {
      for (const ok of ['example.com', 'xn--bcher-kva.example', 'a.b.c.d.io', `${'a'.repeat(63)}.com`, '1.example.com']) {
        expect(normalizeDomain(ok)).toBe(ok);
      }
      for (const bad of [
        '',
        'localhost',
        'exa mple.com',
        '-a.com',
        'a-.com',
        'a..com',
        '.com',
        'a.com/x',
        'user@a.com',
        '192.168.0.1',
        'a.123',
        `${'a'.repeat(64)}.com`,
        `${'a.'.repeat(127)}com`,
        'ex_ample.com',
        'bücher.de',
      ]) {
        expect(() => normalizeDomain(bad)).toThrow(InputError);
      }
    });
  });

  describe('registration toggle', () => {
    it('is disabled until a site admin opens it, and keeps what was set', async () => {
      expect(await settings.getRegistration()).toEqual({ disableRegistration: true });
      expect(await settings.setRegistration(false, 1)).toEqual({ disableRegistration: false });
      expect(await settings.setRegistration(true, 1)).toEqual({ disableRegistration: true });
      expect(await new SiteSettings(db, FACTS).getRegistration()).toEqual({ disableRegistration: true });
      expect(await settings.setRegistration(false, 1)).toEqual({ disableRegistration: false });
    });
  });

  describe('migration 20261122030000_site_settings', () => {
    it('goes down and up again cleanly, leaving the single settings row', async () => {
      const tables = async () =>
        (
          await db
            .knex('information_schema.tables')
            .where({ table_schema: 'identity' })
            .whereIn('table_name', ['site_settings', 'allowed_domains', 'org_avatars'])
            .select('table_name')
        )
          .map((r: { table_name: string }) => r.table_name)
          .sort();
      expect(await tables()).toEqual(['allowed_domains', 'org_avatars', 'site_settings']);
      await siteSettings.down(db.knex, 'identity');
      expect(await tables()).toEqual([]);
      await siteSettings.up(db.knex, 'identity');
      expect(await tables()).toEqual(['allowed_domains', 'org_avatars', 'site_settings']);
      expect(await db.table('site_settings').select('id')).toEqual([{ id: 1 }]);
      await expect(db.table('site_settings').insert({ id: 2 })).rejects.toThrow(/site_settings_single_row/);
      expect(await settings.getRegistration()).toEqual({ disableRegistration: false });
    });
  });
});
