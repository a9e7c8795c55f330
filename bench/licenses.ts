/**
 * `npm run bench -- licenses`: licenses issued per second on one core (issueLicense, the platform CA in memory)
 * beside the raw rate of the same library signing the same certificate (X509CertificateGenerator.create with the
 * same inputs and its default WebCrypto signer), and the bare ECDSA P-256 signature for scale. One process, one
 * certificate at a time, modes interleaved over several rounds so a busy neighbour hurts them alike.
 */
import { createPrivateKey, sign } from 'node:crypto';
// x509: the same library the service uses, set up the same way (the reflect-metadata polyfill first).
import {
  CA_ALGORITHM,
  authorityFromPem,
  generateAuthority,
  issueLicense,
  x509,
  type LicenseTerms,
} from '@platform/app-contracts-licensing/licensing';
import { runLine, writeDocBlock } from './doc-block';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET = 500;

const progress = (msg: string) => process.stderr.write(`[bench licenses] ${msg}\n`);

const terms: LicenseTerms = {
  clusterUID: '6f1c2a4e-8b3d-4e5f-9a0b-1c2d3e4f5a6b',
  email: 'owner@acme.example',
  productLine: 'platform',
  tier: 'enterprise',
  features: ['observability', 'cost-management', 'backup'],
  plan: 'annual',
  allowOffline: true,
  disableAnalytics: false,
  enableClientBilling: true,
  restrictions: '{"maxNodes":50}',
  notAfter: new Date(Date.now() + 365 * 24 * 3600 * 1000),
};

/** Runs `op` back to back for SECONDS and answers how many completed per second. */
async function rate(op: () => Promise<unknown>): Promise<number> {
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  const start = performance.now();
  while (performance.now() < end) {
    await op();
    n += 1;
  }
  return n / ((performance.now() - start) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  progress('generating a platform CA in memory');
  const ca = await generateAuthority();
  const authority = await authorityFromPem(ca.certificatePem, ca.privateKeyPem);
  const sample = await issueLicense(authority, terms);
  const licenseBytes = Buffer.from(sample.der);
  const keyObject = createPrivateKey(ca.privateKeyPem);

  // The same certificate through the library's generator as it comes: the CA key imported once, WebCrypto signing.
  const subject = new x509.Name(
    [
      { C: [terms.productLine] },
      ...terms.features.map((f) => ({ O: [f] })),
      { OU: [terms.plan] },
      { L: ['AllowOffline=true'] },
      { L: [`DisableAnalytics=${terms.disableAnalytics}`] },
      { L: [`EnableClientBilling=${terms.enableClientBilling}`] },
      { L: [`Restrictions=${terms.restrictions}`] },
      { ST: [terms.tier] },
      { CN: [terms.clusterUID] },
    ].map((rdn) =>
      Object.fromEntries(
        Object.entries(rdn).map(([k, [v]]) => [k, [x509.Name.isPrintableString(v) ? { printableString: v } : { utf8String: v }]]),
      ),
    ),
  );
  const raw = () =>
    x509.X509CertificateGenerator.create({
      serialNumber: BigInt(sample.serial).toString(16),
      subject,
      issuer: authority.issuerName,
      notBefore: new Date(),
      notAfter: terms.notAfter,
      publicKey: authority.licensePublicKey,
      signingKey: authority.signingKey,
      signingAlgorithm: CA_ALGORITHM,
      extensions: [
        new x509.SubjectAlternativeNameExtension([
          { type: 'dns', value: terms.clusterUID },
          { type: 'email', value: terms.email },
        ]),
        ...authority.licenseExtensions,
      ],
    });
  const modes: [string, () => Promise<unknown>][] = [
    ['issueLicense (the service)', () => issueLicense(authority, terms)],
    ['raw: X509CertificateGenerator.create, same certificate', raw],
    ['bare ECDSA P-256 signature of as many bytes (node:crypto)', async () => sign('sha256', licenseBytes, keyObject)],
  ];
  progress('warming up');
  for (const [, op] of modes) for (let i = 0; i < 300; i++) await op();

  const rates = new Map<string, number[]>(modes.map(([name]) => [name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, op] of modes) {
      const r = await rate(op);
      rates.get(name)!.push(r);
      progress(`round ${round}/${ROUNDS}: ${name}: ${Math.round(r)}/s`);
    }
  }
  const [issued, library, bare] = modes.map(([name]) => median(rates.get(name)!));
  const rows = modes.map(([name]) => ({
    mode: name,
    perSecond: Math.round(median(rates.get(name)!)),
    rounds: rates.get(name)!.map(Math.round),
  }));
  const share = (x: number, of: number) => `${((100 * x) / of).toFixed(0)}%`;
  const table = [
    '| mode | per second (median) | rounds | issueLicense as a share of it |',
    '|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.perSecond} | ${r.rounds.join(', ')} | ${r.mode.startsWith('issueLicense') ? '—' : share(issued, r.perSecond)} |`,
    ),
  ].join('\n');
  const verdict =
    `Aim: ≥ ${TARGET} licenses/s (${issued >= TARGET ? 'met' : '**not met**'}) and ≥ 50% of the raw rate ` +
    `(${issued >= library / 2 ? 'met' : '**not met**'}: ${share(issued, library)}).`;
  writeDocBlock(
    'licenses',
    [runLine(`${ROUNDS} rounds of ${SECONDS} s per mode, one process, one certificate at a time.`), '', table, '', verdict].join('\n'),
  );
  process.stdout.write(
    `${JSON.stringify({ issuedPerSecond: Math.round(issued), rawPerSecond: Math.round(library), barePerSecond: Math.round(bare), rows }, null, 2)}\n`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
