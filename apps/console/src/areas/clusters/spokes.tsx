import { Table } from '../../ui';
import type { Spoke } from './api';

export function SpokesTable({ caption, spokes }: { caption: string; spokes: Spoke[] }) {
  return (
    <Table
      caption={caption}
      rows={spokes}
      rowKey={(s) => s.uid}
      empty="The hub's agent has reported no managed clusters yet."
      columns={[
        { header: 'Cluster', cell: (s) => s.name },
        { header: 'Display name', cell: (s) => s.displayName || '—' },
        { header: 'Provider', cell: (s) => s.provider || '—' },
        { header: 'Kubernetes', cell: (s) => s.kubernetesVersion || '—' },
        { header: 'Nodes', cell: (s) => s.clusterNode },
        { header: 'Cluster set', cell: (s) => s.clusterSet || <span className="muted">none</span> },
        { header: 'Agent version', cell: (s) => s.agentVersion },
        { header: 'Sync status', cell: (s) => s.sync },
      ]}
    />
  );
}
