import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { marketplaceListenerV1, orgClaimsV1, orgsTeamsV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import { writePrivateFile, type PlatformApi } from '@platform/simulator';
import type { LocalPlatform } from './platform';

/**
 * The marketplace part of the demo (docs/marketplaces.md): on a marketplace deployment, at least three
 * installers of its marketplace not yet bound (made through the site admin's installer route), and two
 * subscriptions bound through the webhook listener the way the marketplace would, whose standalone
 * organizations' claims the manifest names: one claimable, one claimed by the demo owner. A second start finds
 * them (kept under DATA_DIR/demo-seed/marketplace.json) and makes nothing again.
 *
 * The bindings go to the listener as notifications, so they only exist where the listener takes the seed's:
 * the second and third providers with MARKETPLACE_API_SECRET set, the first in RUN_MODE=dev (outside it, only
 * the provider's address ranges are). Otherwise the manifest has no `claims` and the seed says why.
 */

export const DEMO_INSTALLERS = 3;
const MARKETPLACE_OF: Record<string, 'ProviderA' | 'ProviderB' | 'ProviderC'> = {
  ProviderAMarketplace: 'ProviderA',
  ProviderBMarketplace: 'ProviderB',
  ProviderCMarketplace: 'ProviderC',
};

export interface DemoMarketplace {
  installers: string[];
  claims?: { claimable: string; claimed: string };
}

interface Kept {
  installers: string[];
  claims?: { claimable: string; claimed: string };
}

export const marketplaceOfDeployment = (deploymentType: string | undefined) => MARKETPLACE_OF[deploymentType ?? ''];

export async function seedMarketplace(
  env: NodeJS.ProcessEnv,
  platform: LocalPlatform,
  admin: PlatformApi,
  owner: string,
  dir: string,
  say: (msg: string) => void,
): Promise<DemoMarketplace | undefined> {
  const marketplace = marketplaceOfDeployment(env.DEPLOYMENT_TYPE);
  if (!marketplace) return undefined;
  const file = path.join(dir, 'marketplace.json');
  const kept: Kept = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : { installers: [] };
  const grpc = (app: string) => `127.0.0.1:${platform.apps.get(app)?.grpcPort ?? 0}`;
  const listener = createClient(marketplaceListenerV1.MarketplaceListenerServiceService, grpc('marketplace-listener'), {
    name: 'marketplace-listener',
    deadlineMs: 10_000,
  });
  try {
    const unbound = new Set((await listener.listInstallers({ marketplace, unboundOnly: true, limit: 1000 })).installers.map((i) => i.id));
    const makeInstaller = async () => {
      const made = await admin.expect('POST', '/marketplaces/installers', [201], {
        marketplace,
        options: { product: 'productdb', demo: true },
      });
      return (made.body as { id: string }).id;
    };

    let claims = kept.claims;
    const reason = whyNoClaims(env, marketplace);
    if (!claims && !reason) {
      const claimable = await bindOne(await makeInstaller(), false);
      const claimed = await bindOne(await makeInstaller(), true);
      claims = { claimable, claimed };
      say(`bound two ${marketplace} subscriptions through the listener: claim ${claimable} claimable, ${claimed} claimed by ${owner}`);
    } else if (!claims) say(`no marketplace claims in the manifest: ${reason}`);

    // Installers still unbound from an earlier start are kept; the rest are made now.
    const installers = kept.installers.filter((id) => unbound.has(id));
    while (installers.length < DEMO_INSTALLERS) installers.push(await makeInstaller());
    if (installers.length !== kept.installers.length || installers.some((id, i) => id !== kept.installers[i])) {
      say(`${marketplace} installers ready to bind: ${installers.join(', ')}`);
    }
    writePrivateFile(file, `${JSON.stringify({ installers, claims }, null, 2)}\n`);
    return { installers, ...(claims ? { claims } : {}) };
  } finally {
    listener.close();
  }

  /** Binds `installerId` as the marketplace would and answers its subscriber's claim, flagged claimable or claimed. */
  async function bindOne(installerId: string, claim: boolean): Promise<string> {
    const subscriptionId = marketplace === 'ProviderB' ? randomUUID() : installerId;
    const applicationId = `/subscriptions/${subscriptionId}/resourceGroups/demo-rg/providers/Microsoft.Solutions/applications/platform`;
    const bindingInfo = {
      marketplace,
      installerId,
      clusterId: randomUUID(),
      adminUsername: 'admin',
      adminPassword: randomBytes(12).toString('base64url'),
      domainWhiteList: ['demo.example.com'],
      options: {},
      ...(marketplace === 'ProviderA' ? { providerAAccountID: '123456789012' } : {}),
    };
    const now = Date.now();
    await notify(
      marketplace === 'ProviderB'
        ? { eventType: 'BIND', eventTime: iso(now), applicationId, bindingInfo }
        : { eventType: 'subscribe', bindingInfo },
    );
    const sub = await listener.getSubscription({ marketplace, subscriptionId });
    if (!sub.claimId) throw new Error(`the ${marketplace} subscription ${subscriptionId} has no claim`);
    // The marketplace reports the deployment running: the second provider says so itself (PUT Succeeded flags
    // the claim); the others have no such notification, so the claim is flagged the way the listener would.
    if (marketplace === 'ProviderB') {
      await notify({ eventType: 'PUT', eventTime: iso(now + 1000), provisioningState: 'Succeeded', applicationId });
    } else {
      await withClaims((c) => c.markClaimable({ claimId: sub.claimId }));
    }
    if (claim) {
      const users = createClient(orgsTeamsV1.OrgsTeamsServiceService, grpc('orgs-teams'), { name: 'orgs-teams', deadlineMs: 10_000 });
      const userId = await users.getUser({ id: 0, login: owner }).finally(() => users.close());
      await withClaims((c) => c.claimOrg({ claimId: sub.claimId, userId: userId.id }));
    }
    return sub.claimId;
  }

  async function withClaims<T>(fn: (c: ReturnType<typeof claimsClient>) => Promise<T>): Promise<T> {
    const c = claimsClient();
    try {
      return await fn(c);
    } finally {
      c.close();
    }
  }
  function claimsClient() {
    return createClient(orgClaimsV1.OrgClaimsServiceService, grpc('orgs-teams'), { name: 'orgs-teams', deadlineMs: 10_000 });
  }

  /** A notification straight to the listener (as the gateway would forward it), with the secret where it takes one. */
  async function notify(body: object): Promise<void> {
    const slug = marketplace.toLowerCase();
    const secret = marketplace === 'ProviderA' ? '' : `?secret=${encodeURIComponent(env.MARKETPLACE_API_SECRET ?? '')}`;
    const url = `http://127.0.0.1:${platform.apps.get('marketplace-listener')?.httpPort}/marketplace/api/v1/marketplaces/${slug}/notification/resource${secret}`;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${marketplace} notification: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
  }
}

/** Why the listener would refuse the seed's notifications, or undefined when it takes them. */
function whyNoClaims(env: NodeJS.ProcessEnv, marketplace: string): string | undefined {
  if (marketplace === 'ProviderA')
    return env.RUN_MODE === 'dev' ? undefined : 'ProviderA notifications are taken only from its address ranges outside RUN_MODE=dev';
  return env.MARKETPLACE_API_SECRET ? undefined : `${marketplace} notifications need MARKETPLACE_API_SECRET`;
}

const iso = (ms: number) => new Date(ms).toISOString();
