import { InputError } from '@platform/errors';
import { bindService } from '@platform/service-kit';
import { notificationsV1 } from '@platform/proto';
import type { Notices } from './notices';
import type { Webhooks } from './webhooks';

/** NotificationsService: webhook endpoints, the delivery log (webhooks and notice mails) and the notice mails (docs/notifications.md). */
export function notificationsService(notices: Notices, webhooks: Webhooks) {
  return bindService(notificationsV1.NotificationsServiceService, {
    listWebhookEndpoints: async (req) => ({ endpoints: await webhooks.list(req.ownerId) }),
    createWebhookEndpoint: (req) => webhooks.create(req),
    setWebhookEndpointEnabled: (req) => webhooks.setEnabled(req),
    deleteWebhookEndpoint: async (req) => {
      await webhooks.delete(req.ownerId, req.id);
      return {};
    },
    listWebhookDeliveries: async (req) => ({ deliveries: await notices.deliveries(req.ownerId, req.limit) }),
    listNoticeMails: async (req) => ({ mails: await notices.mails(req.ownerId, req.limit) }),
    // Other apps' mails (orgs-teams' address verification) take the notices' path: SMTP, else kept for site admins.
    sendMail: async (req) => {
      if (!req.to || !req.subject || !req.dedupeKey) throw new InputError('a mail needs a recipient, a subject and a dedupe key');
      await notices.deliverMail({ to: req.to, subject: req.subject, text: req.text, html: req.html }, 0, req.dedupeKey);
      return {};
    },
  });
}
