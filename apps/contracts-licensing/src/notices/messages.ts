import type { Mail } from './mailer';

/** The event kinds notices are, as webhooks subscribe to them. */
export const EVENT_KINDS = ['quota.threshold', 'contract.expiring'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** What a notice says, fixed when it is decided (so a retried send says the same). */
export interface NoticeDetail {
  contractId: number;
  contractName: string;
  product: string;
  owner: string;
  ownerId: number;
  /** Quota notices: the threshold in percent, the metric, used and limit, and what happens at 100%. */
  threshold?: number;
  metric?: string;
  used?: number;
  limit?: number;
  disableLicenseOnLimitReached?: boolean;
  /** Expiry notices: how many days before the end, and the end. */
  days?: number;
  endUnix: number;
  recipients: string[];
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const name = (d: NoticeDetail) => `contract ${d.contractId}${d.contractName ? ` (${d.contractName})` : ''}`;

/** The subject and the lines of a notice, plain; the HTML body is the same lines escaped. */
function lines(kind: EventKind, d: NoticeDetail): { subject: string; body: string[] } {
  const end = new Date(d.endUnix * 1000).toISOString().slice(0, 10);
  if (kind === 'contract.expiring')
    return {
      subject: `${name(d)} of ${d.owner} ends in ${d.days} day${d.days === 1 ? '' : 's'}`,
      body: [
        `The ${d.product} ${name(d)} of ${d.owner} ends on ${end} (in ${d.days} day${d.days === 1 ? '' : 's'}).`,
        'Licenses issued from it stop being valid then; extend the contract to keep its clusters licensed.',
      ],
    };
  const used = (d.used ?? 0).toFixed(2);
  const atLimit = d.disableLicenseOnLimitReached
    ? 'At 100% no new license is issued from this contract until its quota is raised.'
    : 'At 100% licenses are still issued; the overrun is reported for billing.';
  return {
    subject: `${name(d)} of ${d.owner} has used ${d.threshold}% of its ${d.metric} quota`,
    body: [
      `The ${d.product} ${name(d)} of ${d.owner} has used ${used} of its ${d.limit} ${d.metric} (${d.threshold}% threshold crossed).`,
      atLimit,
      `The contract runs until ${end}.`,
    ],
  };
}

/** The mail of a notice to one recipient, in plain text and HTML. */
export function noticeMail(kind: EventKind, d: NoticeDetail, to: string): Mail {
  const { subject, body } = lines(kind, d);
  return {
    to,
    subject,
    text: `${body.join('\n\n')}\n`,
    html: `<!doctype html><html><body>${body.map((l) => `<p>${esc(l)}</p>`).join('')}</body></html>`,
  };
}

/** The mail telling an endpoint's owner that it was disabled. */
export function endpointDisabledMail(url: string, reason: string, to: string): Mail {
  const body = [
    `The webhook endpoint ${url} was disabled: ${reason}.`,
    'Fix the endpoint, then enable it again in the console (Notifications).',
  ];
  return {
    to,
    subject: `Webhook endpoint disabled: ${url}`,
    text: `${body.join('\n\n')}\n`,
    html: `<!doctype html><html><body>${body.map((l) => `<p>${esc(l)}</p>`).join('')}</body></html>`,
  };
}
