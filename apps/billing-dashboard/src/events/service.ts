import { eventsV1 } from '@platform/proto';
import { bindService, type ServiceBinding } from '@platform/service-kit';
import type { ResourceEvents } from './events';

/** The ResourceEventsService binding: one line per RPC of proto/platformadmin/billingdashboard/v1/events.proto. */
export function resourceEventsService(events: ResourceEvents): ServiceBinding<typeof eventsV1.ResourceEventsServiceService> {
  return bindService(eventsV1.ResourceEventsServiceService, {
    getResourceHistory: (req, ctx) => events.resourceHistory(req.product, req, ctx),
    listResourceEvents: async (req) => ({
      events: (await events.recent(req.product, req.lastDays)).map((e) => ({
        key: e.key,
        version: e.version,
        timestampMs: e.eventAt.getTime(),
        partialObjectMetaJson: JSON.stringify(e.partialObjectMeta),
      })),
    }),
    getEventsReport: async (req) => {
      const r = await events.report(req.product, req);
      return {
        group: r.group ?? '',
        resource: r.resource ?? '',
        resourceIdJson: r.resourceId == null ? '' : JSON.stringify(r.resourceId),
        totalEvents: r.total,
        eventTimesMs: r.eventTimes.map((t) => t.getTime()),
        eventsDurationHours: r.durationHours,
        averageEventsPerHour: r.averagePerHour,
        key: r.key ?? '',
      };
    },
    getRawEvent: async (req) => {
      const e = await events.raw(req.product, req.key, req.version);
      return { resourceIdJson: JSON.stringify(e.resourceId), licenseId: e.licenseId, version: e.version, timestampMs: e.eventAt.getTime() };
    },
  });
}
