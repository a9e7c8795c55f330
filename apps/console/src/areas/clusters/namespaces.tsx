import { Form, Field, Outcome, Section, Select, Show, Table, useAction } from '../../ui';
import { clustersApi, dnsLabelProblem, useBoundNamespaces, useHubChange, type HubRef } from './api';

/**
 * Namespaces of the hub bound to cluster sets (ManagedClusterSetBindings): workloads placed from a bound namespace
 * may target the set's clusters. The API lists bound namespaces only, so a namespace to bind is typed; the API
 * refuses one the hub's agent has not reported. Binding and unbinding are offered to those who may manage the hub.
 */
export function NamespacesSection({
  hub,
  sets,
  selected,
  mayManage,
}: {
  hub: HubRef;
  sets: string[];
  selected: string | undefined;
  mayManage: boolean;
}) {
  const bound = useBoundNamespaces(hub);
  const bind = useAction();
  const unbind = useAction();
  const binding = useHubChange(hub, ({ namespace, set }: { namespace: string; set: string }) => clustersApi.bind(hub, namespace, set));
  const unbinding = useHubChange(hub, ({ namespace, set }: { namespace: string; set: string }) => clustersApi.unbind(hub, namespace, set));

  const unbindFrom = (namespace: string, set: string) =>
    unbind.run(async () => {
      await unbinding.mutateAsync({ namespace, set });
      return `Unbound ${namespace} from ${set}.`;
    });

  return (
    <Section title="Bound namespaces">
      <Show loaded={bound}>
        {(map) => {
          const rows = Object.entries(map).flatMap(([namespace, bindings]) => bindings.map((set) => ({ namespace, set })));
          return (
            <Table
              caption={`Namespaces of ${hub.cluster} bound to cluster sets`}
              rows={rows}
              rowKey={(r) => `${r.namespace}/${r.set}`}
              empty="No namespace is bound to a cluster set."
              columns={[
                { header: 'Namespace', cell: (r) => r.namespace },
                { header: 'Cluster set', cell: (r) => r.set },
                ...(mayManage
                  ? [
                      {
                        header: 'Actions',
                        cell: (r: (typeof rows)[number]) => (
                          <button
                            type="button"
                            className="danger"
                            disabled={unbind.busy}
                            onClick={() => void unbindFrom(r.namespace, r.set)}
                          >
                            Unbind {r.namespace} from {r.set}
                          </button>
                        ),
                      },
                    ]
                  : []),
              ]}
            />
          );
        }}
      </Show>
      <Outcome action={unbind} />
      {!mayManage ? null : sets.length ? (
        <Form
          label="Bind a namespace"
          submitLabel="Bind namespace"
          action={bind}
          validate={(d) =>
            dnsLabelProblem(String(d.get('namespace') ?? '').trim(), 'Namespace') ??
            (d.get('clusterSet') ? undefined : 'Cluster set is required')
          }
          submit={async (d) => {
            const namespace = String(d.get('namespace')).trim();
            const set = String(d.get('clusterSet'));
            await binding.mutateAsync({ namespace, set });
            return `Bound ${namespace} to ${set}.`;
          }}
        >
          <Field
            label="Namespace"
            name="namespace"
            required
            hint={`A namespace of ${hub.cluster}, as its agent reports it`}
            autoComplete="off"
          />
          <Select key={selected} label="Cluster set" name="clusterSet" options={sets} defaultValue={selected} />
        </Form>
      ) : (
        <p className="muted">Create a cluster set to bind namespaces to it.</p>
      )}
    </Section>
  );
}
