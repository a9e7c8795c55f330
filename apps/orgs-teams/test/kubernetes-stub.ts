// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { KeyObject, webcrypto } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

/** What the stand-in API server answers for one token. */
export interface Review {
  authenticated: boolean;
  username?: string;
  /** The audiences it says the token is for (default: the ones asked). */
  audiences?: string[];
}

/** A ServiceAccount token as Kubernetes issues them: a JWT (unsigned here; only the API server reads it). */
export function serviceAccountJwt(sub: string, expiresInSeconds = 3600): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'RS256', kid: 'test' })}.${part({ sub, aud: ['platform'], iat: now, exp: now + expiresInSeconds })}.${'s'.repeat(43)}`;
}

/**
 * A stand-in Kubernetes API answering TokenReview over HTTPS, with a certificate of its own CA for 127.0.0.1: it
 * answers each token as `reviews` says (unknown tokens unauthenticated), records every review it is asked, and can
 * fail on demand. `files` holds the CA and the bearer token orgs-teams presents, as a pod's would be mounted.
 */
export async function startKubernetesStub() {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=kubernetes',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 24 * 3600_000),
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }])],
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubernetes-stub-'));
  const files = { ca: path.join(dir, 'ca.crt'), token: path.join(dir, 'token') };
  fs.writeFileSync(files.ca, cert.toString('pem'));
  fs.writeFileSync(files.token, 'orgs-teams-pod-token\n');

  const reviews = new Map<string, Review>();
  const asked: { token: string; audiences: string[]; authorization: string | undefined }[] = [];
  const state = { failWith: 0 };
  const server = https.createServer(
    { cert: cert.toString('pem'), key: KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/apis/authentication.k8s.io/v1/tokenreviews') {
          res.writeHead(404).end();
          return;
        }
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { spec: { token: string; audiences: string[] } };
        asked.push({ token: review.spec.token, audiences: review.spec.audiences, authorization: req.headers.authorization });
        if (state.failWith) {
          res.writeHead(state.failWith, { 'content-type': 'application/json' }).end('{"kind":"Status","message":"failed"}');
          return;
        }
        const found = reviews.get(review.spec.token);
        const status = found?.authenticated
          ? { authenticated: true, user: { username: found.username }, audiences: found.audiences ?? review.spec.audiences }
          : { authenticated: false, error: 'invalid bearer token' };
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ...review, status }));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    files,
    reviews,
    asked,
    state,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type KubernetesStub = Awaited<ReturnType<typeof startKubernetesStub>>;
