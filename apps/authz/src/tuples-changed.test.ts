import { InProcessBus, TUPLES_CHANGED } from '@platform/bus';
import { announcingWrites, createLogger, type ServiceBinding } from '@platform/service-kit';
import type { AllowedPermissions } from './roles/allowed-permissions';
import type { Authorization } from './authorization';
import type { Roles } from './roles/roles';
import { ROLES_READS, rolesService } from './roles/service';
import { AUTHZ_READS, authzService } from './service';
import { tuplesChangedNotice } from './tuples-changed';

// authz's writes announce themselves by method, as its app binds its services: every method not listed as a read sends
// TUPLES_CHANGED once it is over, answered or failed, before its caller hears back (waiting a bounded time for a slow
// NATS, not at all for an absent one); a read sends nothing.

const log = createLogger('authz', 'silent');

/** Answers every question with nothing (an empty list): the methods run, or fail, without a database. */
const answeringNothing = <T>(): T => new Proxy({}, { get: (_target, name) => (name === 'catalog' ? () => [] : async () => []) }) as T;

/** The bus the notices go to, counting them. */
async function counted() {
  const bus = new InProcessBus();
  const heard = { n: 0 };
  await bus.listen(TUPLES_CHANGED, () => void heard.n++);
  return { bus, heard };
}

/** Calls every method of the binding once with its empty request, and answers those that sent a notice. */
async function announcers(binding: ServiceBinding<any>, heard: { n: number }): Promise<string[]> {
  const found: string[] = [];
  for (const [name, method] of Object.entries(binding.definition as Record<string, { requestDeserialize(b: Buffer): unknown }>)) {
    const before = heard.n;
    const handle = binding.handlers[name] as (request: unknown, ctx: never) => Promise<unknown>;
    await handle(method.requestDeserialize(Buffer.alloc(0)), {} as never).catch(() => undefined);
    if (heard.n > before) found.push(name);
  }
  return found;
}

describe("authz's writes, announced by method", () => {
  it('announces WriteTuples and every roles write, a rename or a refused change too, and no read', async () => {
    const { bus, heard } = await counted();
    const announce = tuplesChangedNotice(bus, log);
    const authz = announcingWrites(authzService(answeringNothing<Authorization>()), AUTHZ_READS, announce);
    const roles = announcingWrites(rolesService(answeringNothing<Roles>(), answeringNothing<AllowedPermissions>()), ROLES_READS, announce);
    expect(await announcers(authz, heard)).toEqual(['writeTuples']);
    // With nothing stored, each of these fails after it was asked: announced all the same, as a write may fail half done.
    expect(await announcers(roles, heard)).toEqual(['createRole', 'updateRole', 'deleteRole', 'assignTeamRoles', 'deleteOrgRoles']);
  });

  it('lets the caller hear of a write only once NATS has its notice, and at most after the bounded wait', async () => {
    const bus = new InProcessBus();
    let taken: (() => void) | undefined;
    bus.notify = () => new Promise<void>((resolve) => (taken = resolve));
    let over = false;
    const announced = tuplesChangedNotice(bus, log, 60_000)({ method: 'writeTuples', request: {}, response: {} }).then(() => (over = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(over).toBe(false);
    taken!();
    await announced;
    // NATS slow to take it: answered after the wait all the same.
    const started = Date.now();
    await tuplesChangedNotice(bus, log, 50)({ method: 'writeTuples', request: {}, response: {} });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('does not hold a write up while the bus is disconnected: the notice goes once it is back', async () => {
    const bus = new InProcessBus();
    const sent: string[] = [];
    bus.health = () => ({ connected: false, since: new Date() });
    bus.notify = (subject) => (sent.push(subject), new Promise<void>(() => {}));
    await tuplesChangedNotice(bus, log, 60_000)({ method: 'deleteRole', request: {}, response: undefined });
    expect(sent).toEqual([TUPLES_CHANGED]);
  });
});
