import { useCallback, useEffect, useState } from 'react';
import { api, ok, type Schema } from '../../api/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Field, Form, Outcome, Section, Select, Show, Table, missing, useAction } from '../../ui';
import { siteKeys, useClientOrgs, useSiteChange } from './api';
import { Checkbox, ConfirmButton, TextArea } from '../../ui/controls';

// Client organizations (docs/client-organizations.md): site admins create them on a hub for a client of the operator,
// with an admin user and imported cluster sets; deleting one is asynchronous (Active → Deleting → Deleted).

type ClientOrgParams = Schema<'ClientOrgParams'>;
type Status = Schema<'ClientOrgStatus'>['status'];

/** Gitea's rule for account names, which organization slugs and logins share (orgs-teams checks the same). */
const ACCOUNT_NAME = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const VISIBILITIES = ['public', 'limited', 'private'] as const;
/** The role-ref the demo and the product grant on an imported cluster set. */
const SET_ROLE = 'open-cluster-management:managedclusterset:admin';
/** While a deletion runs, the status is asked again this often (the cleanup pass runs every few seconds). */
const STATUS_POLL_MS = 3000;

export default function ClientOrgs() {
  const clients = useClientOrgs();
  return (
    <>
      <h1>Client organizations</h1>
      <Section title="Client organizations">
        <Show loaded={clients}>{(orgs) => <ClientOrgTable orgs={orgs} />}</Show>
      </Section>
      <CreateClientOrg sharedCandidates={clients.data ?? []} />
      <StatusLookup />
    </>
  );
}

function ClientOrgTable({ orgs }: { orgs: Schema<'Organization'>[] }) {
  const action = useAction();
  const deletion = useSiteChange(siteKeys.clientOrgs, (id: number) =>
    ok(api.DELETE('/user/client/delete/{id}', { params: { path: { id } } })),
  );
  const client = useQueryClient();
  const changed = useCallback(() => void client.invalidateQueries({ queryKey: siteKeys.clientOrgs }), [client]);
  // Each row's last known status: only an Active one can be deleted, and one that reached Deleted leaves the list.
  const [statuses, setStatuses] = useState<Record<string, Status>>({});
  const noteStatus = useCallback(
    (name: string, status: Status) => {
      setStatuses((known) => (known[name] === status ? known : { ...known, [name]: status }));
      if (status === 'Deleted') changed();
    },
    [changed],
  );
  const remove = (org: Schema<'Organization'>) =>
    action.run(async () => {
      const answer = await deletion.mutateAsync(org.id);
      return answer.message || `Deleting ${org.name}: its clusters are released, then the organization is removed.`;
    });
  return (
    <>
      <Table
        caption="Client organizations"
        rows={orgs}
        rowKey={(o) => o.id}
        empty="No client organizations."
        columns={[
          { header: 'Name', cell: (o) => <strong>{o.name}</strong> },
          { header: 'Full name', cell: (o) => o.full_name || '—' },
          { header: 'ID', cell: (o) => o.id },
          { header: 'Visibility', cell: (o) => o.visibility || '—' },
          { header: 'Multi-cluster manager endpoint', cell: (o) => <code>{o.managerManagementClusterEndPoint || '—'}</code> },
          { header: 'Status', cell: (o) => <StatusCell name={o.name} onStatus={noteStatus} />, sortable: false },
          {
            header: 'Actions',
            cell: (o) =>
              statuses[o.name] === 'Active' ? (
                <ConfirmButton
                  label={`Delete ${o.name}`}
                  confirmLabel={`Confirm delete ${o.name}`}
                  busy={action.busy}
                  onConfirm={() => void remove(o)}
                />
              ) : (
                <span className="muted">—</span>
              ),
          },
        ]}
      />
      <Outcome action={action} />
    </>
  );
}

/** One client organization's status, asked again while its deletion is under way (and after any change of the list). */
function StatusCell({ name, onStatus }: { name: string; onStatus: (name: string, status: Status) => void }) {
  const status = useQuery({
    queryKey: siteKeys.clientOrgStatus(name),
    queryFn: () => ok(api.GET('/user/client/{orgname}/status', { params: { path: { orgname: name } } })),
    refetchInterval: (q) => (q.state.data?.status === 'Deleting' || q.state.data?.status === 'Partially Deleted' ? STATUS_POLL_MS : false),
  });
  const current = status.data?.status;
  useEffect(() => {
    if (current) onStatus(name, current);
  }, [name, current, onStatus]);
  return <Show loaded={status}>{(s) => <StatusText status={s.status} />}</Show>;
}

function StatusText({ status }: { status: Status }) {
  const tone = status === 'Active' ? 'done' : status === 'Partially Deleted' ? 'error' : 'muted';
  return <span className={tone}>{status}</span>;
}

/** The status of any client organization by name: deleted ones leave the list but keep their status. */
function StatusLookup() {
  const action = useAction();
  return (
    <Section title="Status of a client organization">
      <p className="muted">Deleted client organizations leave the list above; their status stays readable here.</p>
      <Form
        label="Status of a client organization"
        submitLabel="Check status"
        action={action}
        validate={(data) => missing(data, ['name', 'Name of the client organization'])}
        submit={async (data) => {
          const name = String(data.get('name')).trim();
          const { status } = await ok(api.GET('/user/client/{orgname}/status', { params: { path: { orgname: name } } }));
          return `${name}: ${status}`;
        }}
      >
        <Field label="Name of the client organization" name="name" required />
      </Form>
    </Section>
  );
}

function CreateClientOrg({ sharedCandidates }: { sharedCandidates: Schema<'Organization'>[] }) {
  const action = useAction();
  const creation = useSiteChange(siteKeys.clientOrgs, (body: ClientOrgParams) => ok(api.POST('/user/client/create', { body })));
  return (
    <Section title="Create a client organization">
      <Form
        label="Create a client organization"
        submitLabel="Create client organization"
        action={action}
        validate={validateClientOrg}
        submit={async (data) => {
          const org = await creation.mutateAsync(clientOrgParams(data));
          return `Created client organization ${org.name} (ID ${org.id}).`;
        }}
      >
        <fieldset className="form">
          <legend>Organization</legend>
          <Field label="Organization name" name="orgName" required hint="Letters, digits, '.', '_' or '-'; at most 40" />
          <Field label="Full name" name="orgFullName" />
          <Field label="Description" name="description" />
          <Field label="Website" name="website" type="url" placeholder="https://" />
          <Select label="Visibility" name="visibility" options={[...VISIBILITIES]} defaultValue="private" />
        </fieldset>
        <fieldset className="form">
          <legend>Hub cluster</legend>
          <Field label="Hub cluster owner" name="hubClusterOwnerName" required hint="The organization or user owning the hub" />
          <Field label="Hub cluster UID" name="hubClusterUID" required hint="The hub's kube-system UID" />
        </fieldset>
        <fieldset className="form">
          <legend>Admin user</legend>
          <Field label="Admin user name" name="userName" required hint="An existing user, or one made with this email" />
          <Field label="Admin email" name="email" type="email" required />
          <Field label="Cluster sets" name="clusterSets" hint="Names on the hub, separated by commas (optional)" />
          <Field label="Cluster set role" name="setRole" defaultValue={SET_ROLE} />
          <Checkbox label="Import the clusters of these sets" name="importCluster" defaultChecked />
          <Select
            label="Rights on the hub"
            name="hubRole"
            options={[
              ['view', 'view'],
              ['admin', 'admin (manage)'],
              ['', 'none'],
            ]}
            defaultValue="view"
          />
        </fieldset>
        <fieldset className="form">
          <legend>Gateway</legend>
          <Checkbox label="Use a gateway" name="useGateway" />
          <Checkbox label="Usable as shared gateway" name="usableAsShared" />
          <Select
            label="Use the gateway config of"
            name="gatewayConfigRef"
            options={[['', 'its own'], ...sharedCandidates.map((o): [string, string] => [o.name, o.name])]}
            defaultValue=""
          />
          <TextArea label="Gateway config (JSON)" name="gatewayConfig" hint="A JSON object (optional)" />
        </fieldset>
        <fieldset className="form">
          <legend>Settings</legend>
          <TextArea label="Annotations" name="annotations" hint="key=value, one per line (optional)" />
          <TextArea
            label="Database config (JSON)"
            name="dbConfig"
            hint='Node selector and tolerations, e.g. {"nodeSelector": {"pool": "db"}}'
          />
          <TextArea
            label="Telemetry parameters (JSON)"
            name="telemetryParams"
            hint='Monitoring cluster and retention, e.g. {"retentionDays": 30}'
          />
        </fieldset>
      </Form>
    </Section>
  );
}

const text = (data: FormData, name: string) => String(data.get(name) ?? '').trim();
const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** A JSON object typed in a textarea; undefined when empty; throws a readable message when it is not an object. */
function jsonObject(value: string, label: string): Record<string, unknown> | undefined {
  if (!value) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`${label} is not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${label} must be a JSON object`);
  return parsed as Record<string, unknown>;
}

/** `key=value` lines as a map; throws on a line without a key. */
function annotations(value: string): Record<string, string> | undefined {
  const lines = value
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (!lines.length) return undefined;
  return Object.fromEntries(
    lines.map((line) => {
      const at = line.indexOf('=');
      if (at <= 0) throw new Error(`Annotation "${line}" is not key=value`);
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    }),
  );
}

/** The first thing wrong with the form, as the API would refuse it (422/400), before anything is sent. */
function validateClientOrg(data: FormData): string | undefined {
  const absent = missing(
    data,
    ['orgName', 'Organization name'],
    ['hubClusterOwnerName', 'Hub cluster owner'],
    ['hubClusterUID', 'Hub cluster UID'],
    ['userName', 'Admin user name'],
    ['email', 'Admin email'],
  );
  if (absent) return absent;
  if (!ACCOUNT_NAME.test(text(data, 'orgName'))) return 'Organization name: letters, digits, ".", "_" or "-" inside; at most 40 characters';
  if (!ACCOUNT_NAME.test(text(data, 'userName'))) return 'Admin user name: letters, digits, ".", "_" or "-" inside; at most 40 characters';
  if (!EMAIL.test(text(data, 'email'))) return 'Admin email is not an email address';
  const website = text(data, 'website');
  if (website && !URL.canParse(website)) return 'Website is not a URL (https://…)';
  if (list(text(data, 'clusterSets')).length && !text(data, 'setRole')) return 'Cluster set role is required with cluster sets';
  try {
    clientOrgParams(data);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return undefined;
}

/** ClientOrgParams from the form (optional fields only when given). */
function clientOrgParams(data: FormData): ClientOrgParams {
  const visibility = VISIBILITIES.find((v) => v === data.get('visibility'));
  const setRole = text(data, 'setRole');
  const hubRole = text(data, 'hubRole');
  const sets = list(text(data, 'clusterSets'));
  const gatewayConfigRef = text(data, 'gatewayConfigRef');
  const optional = (name: string) => text(data, name) || undefined;
  return {
    clientOrg: {
      orgName: text(data, 'orgName'),
      orgFullName: optional('orgFullName'),
      description: optional('description'),
      website: optional('website'),
      visibility,
    },
    hubClusterOwnerName: text(data, 'hubClusterOwnerName'),
    hubClusterUID: text(data, 'hubClusterUID'),
    userPermission: {
      userName: text(data, 'userName'),
      email: text(data, 'email'),
      permissions: [
        ...sets.map((name) => ({ name, isClusterSet: true, roleType: 'ClusterRole', roleRefName: setRole })),
        // Rights on the hub itself: `view`, or `manage` for a role-ref whose name contains "admin".
        ...(hubRole ? [{ name: 'hub', isClusterSet: false, roleType: 'ClusterRole', roleRefName: hubRole }] : []),
      ],
      importCluster: sets.length > 0 && data.get('importCluster') !== null,
      clientOrg: true,
    },
    useGateway: data.get('useGateway') !== null,
    usableAsShared: data.get('usableAsShared') !== null,
    gatewayConfigRef: gatewayConfigRef ? { clientOrg: gatewayConfigRef } : undefined,
    gatewayConfig: jsonObject(text(data, 'gatewayConfig'), 'Gateway config'),
    annotations: annotations(String(data.get('annotations') ?? '')),
    dbConfig: jsonObject(text(data, 'dbConfig'), 'Database config'),
    telemetryParams: jsonObject(text(data, 'telemetryParams'), 'Telemetry parameters'),
  };
}
