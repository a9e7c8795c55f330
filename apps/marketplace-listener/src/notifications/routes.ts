import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { InputError, MethodNotAllowedError, NotAllowedError, NotFoundError, PayloadTooLargeError } from '@platform/errors';
import type { UrlSigner } from '@platform/object-storage';
import type { EffectContext } from '@platform/db';
import { publicLink, type Logger } from '@platform/service-kit';
import { isPlainObject, type Marketplace } from '../binding-info';
import { buildArchive } from '../installers/archive';
import type { MarketplaceListener } from '../subscriptions/listener';
import type { OrgClaimableCheckResp } from '../subscriptions/claimable';
import type { StoredAnswer } from '../subscriptions/subscriptions-store';
import {
  applicationRefOf,
  bindingInfoOf,
  BindingNotification,
  eventKeyOf,
  parse,
  ProviderBNotification,
  withoutSecrets,
} from './payloads';

/** What the notification routes are built from. */
export interface NotificationDeps {
  listener: MarketplaceListener;
  log: Logger;
  signer: UrlSigner;
  /** MARKETPLACE_API_SECRET; unset: the second and third providers' notifications are refused. */
  apiSecret?: string;
  /** Whether the first provider may send from this address (false outside its ranges); undefined: dev run mode, any. */
  providerASource?: (address: string | undefined) => boolean;
  providerCTestInstaller?: string;
  linkTtlSeconds: number;
  /** PUBLIC_URL: the installer links are built on it, as the ingress serves the listener on the platform's host. */
  publicUrl: string;
  claimable(claimId: string): Promise<OrgClaimableCheckResp>;
  /**
   * Runs a notification's processing and announces it when it wrote (marketplace.changed, which drops what the readers
   * keep of this service's answers), before the notification is answered. Absent: nothing is announced (tests of the
   * routes alone).
   */
  announced?: <T>(work: () => Promise<T>) => Promise<T>;
}

/** The object key download links are signed for. */
const linkKey = (installerId: string) => `marketplace-installers/${installerId}`;

/** Compares a presented secret with ours in constant time (digests first, so lengths do not leak either). */
export function secretMatches(given: unknown, expected: string | undefined): boolean {
  if (!expected || typeof given !== 'string') return false;
  const digest = (v: string) => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The webhook listener's routes below its root. Notification routes answer other methods than POST with 405. */
export function notificationRoutes(deps: NotificationDeps): express.Router {
  const api = express.Router();
  const { listener, log } = deps;
  /**
   * The call the outbox applies a notification's effects for: a marketplace that hangs up cancels them (and
   * the binding is taken back), and they end within the marketplaces' own timeout.
   */
  const callOf = (req: Request, res: Response): EffectContext => {
    const ac = new AbortController();
    res.once('close', () => ac.abort());
    return { requestId: req.get('x-request-id'), signal: ac.signal, deadline: new Date(Date.now() + 30_000) };
  };
  const link = (req: Request, installerId: string) => {
    const expires = Math.floor(Date.now() / 1000) + deps.linkTtlSeconds;
    // On the configured public URL, never the request's Host: the link is handed on to the customer.
    const path = `${req.baseUrl}/marketplaces/installers/${encodeURIComponent(installerId)}/archive`;
    return publicLink(deps.publicUrl, `${path}?${deps.signer.query(linkKey(installerId), expires)}`);
  };
  const answerBinding = (req: Request, res: Response, answer: StoredAnswer) => () =>
    void res.status(answer.status).json({ link: link(req, answer.installerId!) });
  const announced = deps.announced ?? (<T>(work: () => Promise<T>) => work());
  /** Refused before anything is read or stored: the log says so, without the secret. */
  const refuse = (marketplace: Marketplace, req: Request, why: string) => {
    log.warn({ marketplace, address: req.ip, why }, 'marketplace notification refused');
    return new NotAllowedError(why);
  };
  /**
   * A notification route: past authentication, every refusal is audited under the subscription the body names
   * (as far as it can be read), without its secrets. The handler answers with how to answer; what it and the refusal's
   * audit wrote is announced first, so the next request to any gateway sees it.
   */
  const postOnly = (
    path: string,
    marketplace: Marketplace,
    subscriptionOf: (body: unknown) => string,
    handler: (req: Request, res: Response, authenticated: () => void) => Promise<() => void>,
  ) => {
    api.post(path, async (req, res) => {
      let authenticated = false;
      const outcome = await announced(async (): Promise<{ answer: () => void } | { err: unknown }> => {
        try {
          return { answer: await handler(req, res, () => (authenticated = true)) };
        } catch (err) {
          if (authenticated) {
            const body: unknown = req.body;
            const eventType = isPlainObject(body) && typeof body.eventType === 'string' ? body.eventType.slice(0, 64) : '';
            await listener.auditRefusal(
              err,
              { marketplace, subscriptionId: subscriptionOf(body).slice(0, 255), operationType: eventType || 'BIND' },
              withoutSecrets(body),
            );
          }
          return { err };
        }
      });
      if ('err' in outcome) throw outcome.err;
      outcome.answer();
    });
    api.all(path, (req, res) => {
      res.set('allow', 'POST');
      throw new MethodNotAllowedError(`${req.method} is not allowed here; notifications are POST only`);
    });
  };

  postOnly('/marketplaces/providera/notification/resource', 'ProviderA', installerIdOf, async (req, res, authenticated) => {
    if (deps.providerASource && !deps.providerASource(req.ip)) {
      throw refuse('ProviderA', req, 'the notification does not come from an address of ProviderA');
    }
    authenticated();
    const body = parse(BindingNotification, req.body, 'notification');
    const binding = bindingInfoOf(body.bindingInfo, 'ProviderA', { requireOptions: true });
    const answer = await listener.bind(
      {
        key: {
          marketplace: 'ProviderA',
          subscriptionId: binding.installerId,
          eventType: body.eventType ?? '',
          eventKey: eventKeyOf(body.eventTime, req.body),
        },
        eventTime: body.eventTime ? new Date(body.eventTime) : undefined,
        binding,
        billingDetails: binding.providerAAccountID ? { providerAAccountID: binding.providerAAccountID } : {},
        data: withoutSecrets(req.body),
      },
      callOf(req, res),
    );
    return answerBinding(req, res, answer);
  });

  postOnly('/marketplaces/providerb/notification/resource', 'ProviderB', applicationSubscriptionOf, async (req, res, authenticated) => {
    if (!secretMatches(req.query.secret, deps.apiSecret)) throw refuse('ProviderB', req, 'the secret does not match');
    authenticated();
    const body = parse(ProviderBNotification, req.body, 'notification');
    const app = applicationRefOf(body.applicationId);
    const key = {
      marketplace: 'ProviderB' as const,
      subscriptionId: app.subscriptionId,
      eventType: body.eventType,
      eventKey: eventKeyOf(body.eventTime, req.body),
    };
    const billingDetails = {
      applicationId: body.applicationId,
      managedResourceGroupId: app.managedResourceGroupId,
      resourceIdParts: app.resourceIdParts,
      ...(body.billingDetails?.resourceUsageId ? { resourceUsageId: body.billingDetails.resourceUsageId } : {}),
      ...(body.plan ? { plan: body.plan } : {}),
    };
    const data = withoutSecrets({ ...req.body, managedResourceGroupId: app.managedResourceGroupId, resourceIdParts: app.resourceIdParts });
    const eventTime = body.eventTime ? new Date(body.eventTime) : undefined;
    if (body.eventType === 'BIND') {
      const binding = bindingInfoOf(body.bindingInfo, 'ProviderB');
      const answer = await listener.bind({ key, eventTime, binding, billingDetails, plan: body.plan, data }, callOf(req, res));
      return answerBinding(req, res, answer);
    }
    if (!body.provisioningState) throw new InputError(`invalid notification: provisioningState is required for ${body.eventType}`);
    await listener.recordState({ key, eventTime, provisioningState: body.provisioningState, billingDetails, data }, callOf(req, res));
    return () => void res.status(200).end();
  });

  postOnly('/marketplaces/providerc/notification/resource', 'ProviderC', installerIdOf, async (req, res, authenticated) => {
    // Only the designated test installer may come without the secret (the marketplace's own listing test).
    const named = isPlainObject(req.body) && isPlainObject(req.body.bindingInfo) ? req.body.bindingInfo.installerId : undefined;
    const testInstaller = deps.providerCTestInstaller !== undefined && named === deps.providerCTestInstaller;
    if (!testInstaller && !secretMatches(req.query.secret, deps.apiSecret)) throw refuse('ProviderC', req, 'the secret does not match');
    authenticated();
    const body = parse(BindingNotification, req.body, 'notification');
    const binding = bindingInfoOf(body.bindingInfo, 'ProviderC');
    const answer = await listener.bind(
      {
        key: {
          marketplace: 'ProviderC',
          subscriptionId: binding.installerId,
          eventType: body.eventType ?? '',
          eventKey: eventKeyOf(body.eventTime, req.body),
        },
        eventTime: body.eventTime ? new Date(body.eventTime) : undefined,
        binding,
        // The Service Control consumer (`project:<id>`) the buyer's deployment reports under, for metered billing.
        billingDetails: typeof binding.options?.consumerId === 'string' ? { consumerId: binding.options.consumerId } : {},
        data: withoutSecrets(req.body),
      },
      callOf(req, res),
    );
    return answerBinding(req, res, answer);
  });

  api.get('/marketplaces/standalone-organizations/:claimID/claimable', async (req, res) => {
    res.json(await deps.claimable(String(req.params.claimID)));
  });

  // The `{link}` of a binding: the installer archive, for as long as the signature holds.
  api.get('/marketplaces/installers/:id/archive', async (req, res) => {
    const id = String(req.params.id);
    const check = deps.signer.verify(linkKey(id), req.query.expires, req.query.signature);
    if (check === 'invalid') throw new NotAllowedError('the download link is not validly signed');
    if (check === 'expired') throw new NotAllowedError('the download link has expired');
    const installer = await listener.installers.get(id);
    if (!installer?.binding || !installer.subscription_id || !installer.bound_at) throw new NotFoundError(`installer ${id} is not bound`);
    const archive = await buildArchive({
      installerId: installer.id,
      marketplace: installer.marketplace,
      subscriptionId: installer.subscription_id,
      options: installer.options,
      binding: installer.binding,
      boundAt: installer.bound_at,
    });
    res
      .status(200)
      .set({
        'content-type': 'application/gzip',
        'content-disposition': `attachment; filename="${installer.id}.tar.gz"`,
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
      })
      .send(archive);
  });

  return api;
}

/** The subscription of a first- or third-provider notification: its installer ID, when it names one. */
function installerIdOf(body: unknown): string {
  const id = isPlainObject(body) && isPlainObject(body.bindingInfo) ? body.bindingInfo.installerId : undefined;
  return typeof id === 'string' ? id : '';
}

/** The subscription of a second-provider notification, when its applicationId can be read. */
function applicationSubscriptionOf(body: unknown): string {
  if (!isPlainObject(body) || typeof body.applicationId !== 'string') return '';
  try {
    return applicationRefOf(body.applicationId).subscriptionId;
  } catch {
    return '';
  }
}

/** What body-parser throws for a malformed or oversized body: 400, or 413 for one over the limit. */
export function bodyError(err: unknown): Error | undefined {
  const type = (err as { type?: unknown })?.type;
  if (type === 'entity.parse.failed') return new InputError('the notification is not valid JSON');
  // 413, as the gateway answers an oversized body: the same status for the same condition on every port.
  if (type === 'entity.too.large') return new PayloadTooLargeError('the notification is too large (at most 256 KiB)');
  if (type === 'charset.unsupported' || type === 'encoding.unsupported')
    return new InputError('the notification’s encoding is not supported');
  return undefined;
}
