import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  authorityFromPem,
  generateAuthority,
  issueLicense,
  revocationList,
  type LicenseAuthority,
} from '@platform/app-contracts-licensing/licensing';
import { runLicenseCli } from '../src/license-cli';
import type { Run } from './helpers';

const CLUSTER = '2d7e9f10-4a3b-4c5d-8e6f-7a8b9c0d1e2f';

async function license(argv: string[], env: Record<string, string> = {}): Promise<Run> {
  let out = '';
  let err = '';
  const code = await runLicenseCli(argv, { env, out: (s) => void (out += s), err: (s) => void (err += s), readStdin: async () => '' });
  return { code, out, err };
}

/** `npm run license`'s entry (deploy/cli/license.mjs) as a process of its own. */
function licenseProcess(argv: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '../license.mjs'), ...argv], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

describe('npm run license -- verify: the offline verifier', () => {
  let dir: string;
  let authority: LicenseAuthority;
  const file = (name: string) => path.join(dir, name);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'license-cli-'));
    const ca = await generateAuthority();
    authority = await authorityFromPem(ca.certificatePem, ca.privateKeyPem);
    const terms = {
      clusterUID: CLUSTER,
      email: 'owner@acme.example',
      productLine: 'platform',
      tier: 'enterprise',
      features: ['observability', 'cost-management'],
      plan: 'annual',
      allowOffline: true,
      disableAnalytics: false,
      enableClientBilling: false,
      restrictions: '',
      notAfter: new Date(Date.now() + 30 * 24 * 3600 * 1000),
    };
    const valid = await issueLicense(authority, terms);
    const revoked = await issueLicense(authority, terms);
    const crl = await revocationList(authority, [{ serial: revoked.serial, revokedAt: new Date() }]);
    // The License answer's base64 as a customer would save it, a DER file, the CA as published, the CRL in DER.
    fs.writeFileSync(file('valid.b64'), Buffer.from(valid.der).toString('base64'));
    fs.writeFileSync(file('revoked.der'), revoked.der);
    fs.writeFileSync(file('ca.pem'), authority.certificatePem);
    fs.writeFileSync(file('crl.der'), crl.der);
    fs.writeFileSync(file('crl.pem'), crl.pem);
    const other = await generateAuthority();
    fs.writeFileSync(file('other-ca.pem'), other.certificatePem);
  });

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('says a valid license is valid and what it grants (exit 0)', async () => {
    const run = await license([
      'verify',
      file('valid.b64'),
      '--cluster',
      CLUSTER,
      '--features',
      'observability',
      '--crl',
      file('crl.der'),
      '--ca',
      file('ca.pem'),
    ]);
    expect(run).toMatchObject({ code: 0, err: '' });
    expect(run.out).toMatch(/^valid: license \d+ for cluster 2d7e9f10-/);
    expect(run.out).toContain('features observability, cost-management');
    expect(run.out).toContain('AllowOffline=true');
  });

  it('refuses a revoked license given the CRL, DER or PEM, naming the reason (exit 1)', async () => {
    for (const crl of ['crl.der', 'crl.pem']) {
      const run = await license(['verify', file('revoked.der'), '--cluster', CLUSTER, '--crl', file(crl), '--ca', file('ca.pem')]);
      expect(run.code).toBe(1);
      expect(run.err).toMatch(/^license: refused \(revoked\): license \d+ is revoked\n$/);
      expect(run.out).toBe('');
    }
  });

  it('refuses a license for another cluster, without the features asked for, or under another CA', async () => {
    const base = ['verify', file('valid.b64'), '--ca', file('ca.pem')];
    expect((await license([...base, '--cluster', '00000000-0000-4000-8000-000000000000'])).err).toContain('refused (wrong-cluster)');
    expect((await license([...base, '--cluster', CLUSTER, '--features', 'billing'])).err).toContain('refused (no-feature-overlap)');
    const foreign = await license(['verify', file('valid.b64'), '--cluster', CLUSTER, '--ca', file('other-ca.pem')]);
    expect(foreign).toMatchObject({ code: 1 });
    expect(foreign.err).toContain('refused (foreign-ca)');
  });

  it('answers usage errors and unreadable files with their own exit codes; takes the CA from LICENSE_CA_CERT', async () => {
    expect((await license(['verify', file('valid.b64')])).code).toBe(64);
    expect(await license(['verify', file('valid.b64'), '--cluster', CLUSTER])).toMatchObject({
      code: 64,
      err: expect.stringContaining('--ca'),
    });
    expect((await license(['verify', file('missing.der'), '--cluster', CLUSTER, '--ca', file('ca.pem')])).code).toBe(66);
    // A license is no CA.
    expect(await license(['verify', file('valid.b64'), '--cluster', CLUSTER, '--ca', file('valid.b64')])).toMatchObject({
      code: 65,
      err: expect.stringContaining('not a CA'),
    });
    expect((await license(['verify', file('valid.b64'), '--cluster', CLUSTER, '--ca', file('ca.pem'), '--crl', file('ca.pem')])).code).toBe(
      65,
    );
    const fromEnv = await license(['verify', file('valid.b64'), '--cluster', CLUSTER], { LICENSE_CA_CERT: authority.certificatePem });
    expect(fromEnv.code).toBe(0);
  });

  it('runs as npm run license does: --help, and a refusal with a non-zero exit', async () => {
    const help = await licenseProcess(['verify', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--cluster <uid>');
    expect(help.out).toContain('Exit codes');
    const refused = await licenseProcess([
      'verify',
      file('revoked.der'),
      '--cluster',
      CLUSTER,
      '--crl',
      file('crl.der'),
      '--ca',
      file('ca.pem'),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('refused (revoked)');
  }, 60_000);
});
