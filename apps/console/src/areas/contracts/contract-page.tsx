import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { Section, Show, Table, instant, when, type Column } from '../../ui';
import type { Loaded } from '../../ui/data';
import { BindCluster, BoundClusters } from './clusters';
import { QuotaSection } from './quota';
import {
  useContract,
  useContractAudit,
  useDocumentUrl,
  useQuotaUsage,
  type AuditEvent,
  type Contract,
  type ContractRights,
  type ContractRoutes,
} from './api';
import { clusterName, contractState, contractTitle, term } from './terms';

/**
 * One contract's page, the same for an organization's members and for site admins (`routes` says which API
 * side): its terms, bound clusters (issue and download licenses, unbind, bind), quota, document and audit trail.
 * `more` adds a side's own sections (the admins' extend and revoke); `may` says which changes the caller is offered.
 */
export function ContractPage({
  routes,
  id,
  may,
  more,
}: {
  routes: ContractRoutes;
  id: number;
  may: ContractRights;
  more?: (contract: Contract) => ReactNode;
}) {
  const contract = useContract(routes, id);
  const audit = useContractAudit(routes, id);
  return (
    <>
      <p>
        <Link to={routes.base}>All contracts</Link>
      </p>
      <Show loaded={contract}>
        {(c) => (
          <>
            <Terms contract={c} />
            <BoundClusters routes={routes} contract={c} may={may} />
            {may.bind && <BindCluster routes={routes} contract={c} />}
            <Quota routes={routes} contract={c} />
            <DocumentSection routes={routes} contract={c} />
            {more?.(c)}
            <AuditTrail audit={audit} contract={c} />
          </>
        )}
      </Show>
    </>
  );
}

/** The quota with its usage, measured by the platform (asked again after every change of the contract, a refused license too). */
function Quota({ routes, contract }: { routes: ContractRoutes; contract: Contract }) {
  return <QuotaSection contract={contract} usage={useQuotaUsage(routes, contract)} />;
}

const RECIPIENTS: Record<string, string> = {
  licenseUsers: 'License users',
  usageAlertClient: 'Usage alerts to',
  usageAlertAdmin: 'Usage alerts to admins',
  contactPerson: 'Contact person',
  signingAuthority: 'Signing authority',
  financeTeam: 'Finance team',
};

const yesNo = (b: boolean) => (b ? 'Yes' : 'No');

/** A term and its description, grouped so a list of them stays valid HTML. */
function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Terms({ contract: c }: { contract: Contract }) {
  // The account's routes answer only two recipient lists, the admins' all six: show the ones answered.
  const recipients = Object.entries(c.emails as Record<string, string[] | undefined>).filter(([k]) => k in RECIPIENTS);
  return (
    <Section title={contractTitle(c)}>
      <dl className="grid">
        <Fact label="Contract">
          {c.id}, of <strong>{c.orgOrUser}</strong>
        </Fact>
        <Fact label="Status">{contractState(c)}</Fact>
        <Fact label="Product">{c.product}</Fact>
        <Fact label="Features">{c.features.join(', ') || '—'}</Fact>
        <Fact label="Term">{term(c)}</Fact>
        <Fact label="Offline licenses allowed">{yesNo(c.allowOffline)}</Fact>
        <Fact label="New clusters bound automatically">{yesNo(c.autoAssignCluster)}</Fact>
        <Fact label="Analytics disabled">{yesNo(c.disableAnalytics)}</Fact>
        <Fact label="Client billing">{yesNo(c.enableClientBilling)}</Fact>
        {c.restrictions && (
          <Fact label="Restrictions">
            <code>{c.restrictions}</code>
          </Fact>
        )}
        {recipients.map(([key, list]) => (
          <Fact key={key} label={RECIPIENTS[key]}>
            {list?.join(', ') || '—'}
          </Fact>
        ))}
      </dl>
    </Section>
  );
}

/** The document behind a signed URL, asked for when shown: the URL is valid 30 minutes. */
function DocumentSection({ routes, contract }: { routes: ContractRoutes; contract: Contract }) {
  const has = Boolean(contract.documentPath);
  const url = useDocumentUrl(routes, contract);
  const file = contract.documentPath.split('/').pop() ?? 'document';
  return (
    <Section title="Document">
      {!has ? (
        <p className="muted">No document was uploaded with this contract.</p>
      ) : (
        <Show loaded={url}>
          {(href) => (
            <p>
              <a href={href} download={file}>
                Download the contract document ({file})
              </a>{' '}
              <span className="muted">(the link is valid for 30 minutes)</span>
            </p>
          )}
        </Show>
      )}
    </Section>
  );
}

const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function AuditTrail({ audit, contract }: { audit: Loaded<AuditEvent[]>; contract: Contract }) {
  // Events name clusters by UUID; a bound cluster's name is added so the trail reads as the page does.
  const names = new Map(contract.clusters.map((b) => [b.cluster.toLowerCase(), clusterName(b)]));
  const named = (event: string) =>
    event.replace(UUIDS, (uuid) => {
      const name = names.get(uuid.toLowerCase());
      return name && name !== uuid ? `${name} (${uuid})` : uuid;
    });
  const columns: Column<AuditEvent>[] = [
    { header: 'When', cell: (e) => when(e.createdUnix), value: (e) => instant(e.createdUnix) },
    { header: 'By', cell: (e) => e.addedBy },
    { header: 'Event', cell: (e) => named(e.event) },
  ];
  return (
    <Section title="Audit trail">
      <Show loaded={audit}>
        {(events) => (
          // Newest first: the latest change is what one looks for.
          <Table caption={`Audit trail of contract ${contract.id}`} columns={columns} rows={[...events].reverse()} rowKey={(e) => e.id} />
        )}
      </Show>
    </Section>
  );
}
