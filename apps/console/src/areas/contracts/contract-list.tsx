import { Link } from 'react-router';
import { Table, type Column } from '../../ui';
import { quotaMetricName } from '../../ui/quantities';
import type { Contract } from './api';
import { contractState, contractTitle, term } from './terms';

/** A list of contracts, each linking to its page under `base`; `showOwner` for lists of several owners. */
export function ContractsTable({
  caption,
  contracts,
  base,
  showOwner = false,
}: {
  caption: string;
  contracts: Contract[];
  base: string;
  showOwner?: boolean;
}) {
  const columns: Column<Contract>[] = [
    { header: 'Contract', cell: (c) => <Link to={`${base}/${c.id}`}>{contractTitle(c)}</Link> },
    ...(showOwner ? [{ header: 'Owner', cell: (c: Contract) => c.orgOrUser }] : []),
    { header: 'Features', cell: (c) => c.features.join(', ') || '—' },
    { header: 'Term', cell: (c) => term(c), value: (c) => c.start },
    { header: 'Status', cell: (c) => contractState(c) },
    { header: 'Clusters', cell: (c) => c.clusters.length },
    {
      header: 'Quota',
      cell: (c) => (c.quota.enabled ? `${c.quota.limit.toLocaleString()} ${quotaMetricName(c.quota.metric)}` : 'none'),
    },
  ];
  return <Table caption={caption} columns={columns} rows={contracts} rowKey={(c) => c.id} empty="No contract yet." />;
}
