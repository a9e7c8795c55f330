import { openDatabase, type Database } from '@platform/db';
import { createLogger } from '@platform/service-kit';
import { metricsText } from '@platform/telemetry';
import { createTestDatabase, eventually } from '@platform/testing';
import { migrations } from '../migrations';
import { startLicenseMetrics } from '../src/licenses/license-metrics';

/** The value of a sample `name{labels}` in a scrape, or undefined. */
const sample = (text: string, name: string, labels = '') =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `))
    .map((l) => Number(l.split(' ').pop()))[0];

describe('the license gauges', () => {
  let db: Database;
  let drop: () => Promise<void>;
  let stop: (() => void) | undefined;
  beforeAll(async () => {
    const test = await createTestDatabase();
    drop = test.drop;
    db = await openDatabase({ url: test.url, dataDir: '', schema: 'contracts' });
    await db.migrate(migrations);
  });
  afterAll(async () => {
    stop?.();
    await db.close();
    await drop();
  });

  it('count valid, soon-expiring and revoked licenses, the clusters they license, and contracts past a quota threshold', async () => {
    const day = 86_400_000;
    const license = (serial: string, cluster: string, endsInDays: number, revoked = false) => ({
      serial,
      contract_id: 1,
      cluster_uid: cluster,
      issued_by: 'owner',
      not_after: new Date(Date.now() + endsInDays * day),
      revoked_at: revoked ? new Date() : null,
    });
    const a = '6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e';
    const b = '7f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e';
    await db.table('issued_licenses').insert([
      license('1', a, 3), // expires within 7 days
      license('2', a, 20), // within 30
      license('3', b, 200),
      license('4', b, 200, true), // revoked
      license('5', b, -1), // expired
    ]);
    const [contract] = await db
      .table('contracts')
      .insert({
        owner_id: 1,
        owner_login: 'acme',
        owner_type: 'organization',
        product: 'productdb',
        start_at: new Date(),
        end_at: new Date(Date.now() + 365 * day),
      })
      .returning('id');
    await db.table('quota_alerts').insert({ contract_id: contract.id, threshold: 80 });

    stop = startLicenseMetrics(db, createLogger('license-metrics', 'silent'), 1_000);
    await eventually(async () => sample((await metricsText()).body, 'platform_licenses_valid') === 3, 10_000);
    const text = (await metricsText()).body;
    expect(sample(text, 'platform_licenses_expiring', 'within="7d"')).toBe(1);
    expect(sample(text, 'platform_licenses_expiring', 'within="30d"')).toBe(2);
    expect(sample(text, 'platform_licensed_clusters')).toBe(2);
    expect(sample(text, 'platform_contracts_over_quota_threshold', 'threshold="80"')).toBe(1);
    expect(text).toMatch(/^platform_build_info\{version="\d+\.\d+\.\d+[^"]*",node_version="v\d+/m);
  });
});
