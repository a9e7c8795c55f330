import { useMemo } from 'react';
import { useParams } from 'react-router';
import { OrgNav } from '../../ui/org-nav';
import { orgRoutes, siteRoutes } from './api';
import { Deliveries, Mails, Webhooks } from './notifications';

/**
 * The notifications area (docs/notifications.md): an organization's webhook endpoints and their deliveries for its
 * owners and site admins (`/orgs/:org/notifications`), and the site's, with the notice mails, for site admins
 * (`/admin/notifications`). Who hears by mail is set on each contract (its recipients).
 */

export function OrgNotifications() {
  const org = useParams().org ?? '';
  const routes = useMemo(() => orgRoutes(org), [org]);
  return (
    <>
      <OrgNav org={org} />
      <Webhooks routes={routes} />
      <Deliveries routes={routes} />
    </>
  );
}

export function AdminNotifications() {
  return (
    <>
      <h1>Notifications</h1>
      <Webhooks routes={siteRoutes} />
      <Deliveries routes={siteRoutes} />
      <Mails />
    </>
  );
}
